import type { AuditLogView } from '@modelgate/contracts'
import { get, getFile, type Page, type Query } from '../../api/client'

/** The filters of the audit view; blank ones do not filter. */
export interface AuditQuery {
  actor: string
  action: string
  target_type: string
  target_id: string
  /** Unix seconds, inclusive. */
  start_timestamp?: number
  /** Unix seconds, exclusive. */
  end_timestamp?: number
}

const queryOf = (q: AuditQuery): Query => ({ ...q })

/** A page of entries, newest first (root only). */
export async function fetchAudit (q: AuditQuery, page: number, pageSize: number): Promise<Page<AuditLogView>> {
  return await get<Page<AuditLogView>>('/api/audit/', { ...queryOf(q), p: page, page_size: pageSize })
}

/** The entries matching `q` as CSV, and the file name the server gives it. */
export async function exportAudit (q: AuditQuery): Promise<{ blob: Blob, fileName: string }> {
  const { blob, fileName } = await getFile('/api/audit/export', queryOf(q))
  return { blob, fileName: fileName ?? 'audit.csv' }
}
