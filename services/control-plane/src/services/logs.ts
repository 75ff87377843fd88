import { ROLES } from '@modelgate/contracts'
import type { LogType } from '@modelgate/contracts'
import { type Log, type LogFilter, type UsageGranularity } from '@modelgate/db'
import Type from 'typebox'
import { fail } from '../lib/errors.js'
import { defineMessages } from '../lib/i18n.js'

/** Messages of the log and dashboard routes. */
export const LM = defineMessages({
  logsCleared: { en: '{n} logs cleared', zh: '已清理 {n} 条日志' },
  dataExportDisabled: { en: 'Data export (the usage dashboard) is disabled by the administrator', zh: '管理员已关闭数据导出（使用统计看板）' },
  rangeTooLong: { en: 'The time range may span at most {days} days', zh: '时间范围最多 {days} 天' },
  rangeInverted: { en: 'The start time must be before the end time', zh: '开始时间必须早于结束时间' }
})

// The console sends every filter, blank ones as empty strings.
const blankOr = <T extends Type.TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Literal('')]))
const text = blankOr(Type.String({ maxLength: 200 }))
const int = blankOr(Type.Integer({ minimum: 0 }))

/** Filters of /api/log/self/ and its stat. */
export const SelfLogQuery = {
  type: int,
  token_name: text,
  model_name: text,
  start_timestamp: int,
  end_timestamp: int
}

/** Filters of /api/log/ and its stat: the self filters plus username and channel. */
export const AdminLogQuery = {
  ...SelfLogQuery,
  username: text,
  channel: int
}

interface LogQueryValues {
  type?: number | ''
  token_name?: string
  model_name?: string
  start_timestamp?: number | ''
  end_timestamp?: number | ''
  username?: string
  channel?: number | ''
}

// Type 0 ("unknown"), channel 0 and timestamp 0 are what the console sends for "any".
const num = (v: number | '' | undefined): number | undefined => (v === '' || v === 0 ? undefined : v)
const str = (v: string | undefined): string | undefined => (v === '' ? undefined : v)

/**
 * The query as a filter. `selfId` set: the caller's own rows only, and the admin-only filters
 * (username, channel) are ignored.
 */
export function logFilterOf (q: LogQueryValues, selfId?: number): LogFilter {
  const filter: LogFilter = {
    // Any number the console sends: a type no row has finds none.
    type: num(q.type) as LogType | undefined,
    tokenName: str(q.token_name),
    modelName: str(q.model_name),
    start: num(q.start_timestamp),
    end: num(q.end_timestamp)
  }
  if (selfId !== undefined) filter.userId = selfId
  else {
    filter.username = str(q.username)
    filter.channelId = num(q.channel)
  }
  return filter
}

/** How many days back a common user sees the details of their own logs. */
export const SELF_LOG_DAYS = 3

/**
 * The caller's own logs: a common user's never start before {@link SELF_LOG_DAYS} days ago,
 * whatever the query asks; admins reading their own logs are not limited.
 */
export function selfLogFilterOf (q: LogQueryValues, user: { id: number, role: number }, now: number): LogFilter {
  const filter = logFilterOf(q, user.id)
  if (user.role < ROLES.admin) filter.start = Math.max(filter.start ?? 0, now - SELF_LOG_DAYS * 86_400)
  return filter
}

/** A log as its own user may see it: without the channel that served it or other admin details. */
export function selfLogView (log: Log): Omit<Log, 'channel_id'> {
  const { channel_id: _channel, other, ...rest } = log
  if (other === null) return { ...rest, other }
  const { admin_info: _admin, ...visible } = other
  return { ...rest, other: visible }
}

const DAY = 86_400
export const MAX_USAGE_RANGE_DAYS = 366
const DEFAULT_USAGE_RANGE_DAYS = 7

/** Query of the dashboard routes. */
export const UsageQuery = {
  start_timestamp: int,
  end_timestamp: int,
  granularity: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('week')]))
}

/** The dashboard's range (default the last 7 days) and granularity (default the DataExportDefaultTime option). */
export function usageRangeOf (
  q: { start_timestamp?: number | '', end_timestamp?: number | '', granularity?: UsageGranularity },
  defaultGranularity: string,
  now: number
): { start: number, end: number, granularity: UsageGranularity } {
  const end = num(q.end_timestamp) ?? now
  const start = num(q.start_timestamp) ?? end - DEFAULT_USAGE_RANGE_DAYS * DAY
  if (start >= end) throw fail(LM.rangeInverted)
  if (end - start > MAX_USAGE_RANGE_DAYS * DAY) throw fail(LM.rangeTooLong, { days: MAX_USAGE_RANGE_DAYS })
  const fallback: UsageGranularity = defaultGranularity === 'day' || defaultGranularity === 'week' ? defaultGranularity : 'hour'
  return { start, end, granularity: q.granularity ?? fallback }
}
