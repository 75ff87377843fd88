import type { UserView } from '@modelgate/contracts'
import { get, type Page, type Query } from '../../api/client'
import type { LogQuery, LogRow, LogStats } from './types'

// Admins read everyone's logs (with the channel and username filters); users only their own.
const base = (admin: boolean) => (admin ? '/api/log/' : '/api/log/self/')

function queryOf (q: LogQuery, admin: boolean): Query {
  return {
    type: q.type,
    token_name: q.token_name,
    model_name: q.model_name,
    start_timestamp: q.start_timestamp,
    end_timestamp: q.end_timestamp,
    ...(admin ? { username: q.username, channel: q.channel } : {})
  }
}

export async function fetchLogs (admin: boolean, q: LogQuery, page: number, pageSize: number): Promise<Page<LogRow>> {
  return await get<Page<LogRow>>(base(admin), { ...queryOf(q, admin), p: page, page_size: pageSize })
}

export async function fetchLogStats (admin: boolean, q: LogQuery): Promise<LogStats> {
  return await get<LogStats>(`${base(admin)}stat`, queryOf(q, admin))
}

/** A user's account as an admin sees it (the username link of the admin log). */
export async function fetchUser (id: number): Promise<UserView> {
  return await get<UserView>(`/api/user/${id}`)
}
