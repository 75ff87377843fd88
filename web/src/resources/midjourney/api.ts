import { get, type Page } from '../../api/client'

/** A drawing task as GET /api/mj/ shows it; channel_id and code only for admins. */
export interface DrawingTask {
  id: number
  user_id: number
  /** Submit result: 1 submitted, 21 waiting, 22 duplicate, 0 not submitted. */
  code?: number
  channel_id?: number
  action: string
  mj_id: string
  prompt: string
  prompt_en: string
  description: string
  /** NOT_START, SUBMITTED, IN_PROGRESS, MODAL, SUCCESS, FAILURE. */
  status: string
  progress: string
  image_url: string
  fail_reason: string
  /** Unix seconds; 0 when not yet. */
  submit_time: number
  start_time: number
  finish_time: number
}

export interface DrawingQuery { start?: number, end?: number, mjId: string, channel?: number }

/** Admins read everyone's tasks (with the channel filter); users their own through /self/. */
export async function listDrawings (admin: boolean, q: DrawingQuery, page: number, size: number): Promise<Page<DrawingTask>> {
  const query = { p: page, page_size: size, start_timestamp: q.start, end_timestamp: q.end, mj_id: q.mjId.trim() }
  if (admin) return await get<Page<DrawingTask>>('/api/mj/', { ...query, channel_id: q.channel })
  return await get<Page<DrawingTask>>('/api/mj/self/', query)
}
