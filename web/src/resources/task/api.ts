import { get, type Page } from '../../api/client'

/** A music (Suno) or video task as GET /api/task/ shows it (told apart by `platform`); channel_id only for admins. */
export interface TaskRow {
  id: number
  task_id: string
  platform: string
  user_id: number
  channel_id?: number
  action: string
  /** NOT_START, SUBMITTED, QUEUED, IN_PROGRESS, SUCCESS, FAILURE, UNKNOWN; empty while submitting. */
  status: string
  fail_reason: string
  /** Unix seconds; 0 when not yet. */
  submit_time: number
  start_time: number
  finish_time: number
  progress: string
  quota: number
  /** What the upstream last reported (songs, lyrics, a video object), as stored: read with ./results. */
  data?: unknown
}

export interface TaskQuery { start?: number, end?: number, taskId: string, channel?: number }

/** Admins read everyone's tasks (with the channel filter); users their own through /self. */
export async function listTasks (admin: boolean, q: TaskQuery, page: number, size: number): Promise<Page<TaskRow>> {
  const query = { p: page, page_size: size, start_timestamp: q.start, end_timestamp: q.end, task_id: q.taskId.trim() }
  if (admin) return await get<Page<TaskRow>>('/api/task/', { ...query, channel_id: q.channel })
  return await get<Page<TaskRow>>('/api/task/self', query)
}
