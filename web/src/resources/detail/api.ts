import { get } from '../../api/client'
import type { Granularity, UsageBucket } from './series'

export interface UsageQuery {
  start_timestamp: number
  end_timestamp: number
  granularity: Granularity
  /** Admins: one user's data; blank for every user. */
  username?: string
}

/** Dashboard buckets from quota_data: the caller's own, or (admins) one user's or everyone's. */
export async function fetchUsage (admin: boolean, q: UsageQuery): Promise<UsageBucket[]> {
  const { username, ...rest } = q
  return admin
    ? await get<UsageBucket[]>('/api/data/', { ...rest, username: username?.trim() })
    : await get<UsageBucket[]>('/api/data/self', rest)
}
