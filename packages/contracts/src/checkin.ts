import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'

/** Largest check-in reward an admin may set, in quota units ($2,000,000 at 500,000 units per dollar). */
export const CHECKIN_QUOTA_MAX = 1_000_000_000_000

/** A month as 'YYYY-MM'. Check-in days are UTC days ('YYYY-MM-DD'): the product has no time-zone setting. */
export const CHECKIN_MONTH_PATTERN = '^[0-9]{4}-(0[1-9]|1[0-2])$'

/** `GET /api/user/checkin`: `month` ('YYYY-MM') picks the records; default the current (UTC) month. */
export const CheckinQuery = Type.Object({
  month: Type.Optional(Type.String({ pattern: CHECKIN_MONTH_PATTERN }))
})
export type CheckinQuery = Static<typeof CheckinQuery>

/** One check-in: its day and the quota units it credited. */
export const CheckinRecord = Type.Object({
  checkin_date: Type.String(),
  quota_awarded: Type.Integer()
})
export type CheckinRecord = Static<typeof CheckinRecord>

/** The caller's check-ins (new-api's names). */
export const CheckinStats = Type.Object({
  /** Whether the caller has checked in today (UTC). */
  checked_in_today: Type.Boolean(),
  /** The check-ins of the month asked for, newest first. */
  records: Type.Array(CheckinRecord),
  /** Check-ins in the month asked for. */
  checkin_count: Type.Integer(),
  /** Quota units from every check-in, all time. */
  total_quota: Type.Optional(Type.Integer()),
  /** Check-ins, all time. */
  total_checkins: Type.Optional(Type.Integer())
})
export type CheckinStats = Static<typeof CheckinStats>

/** `GET /api/user/checkin`: the settings the user may know, and their check-ins. */
export const CheckinStatusView = Type.Object({
  enabled: Type.Boolean(),
  /** Quota units; a check-in credits a uniform draw from min_quota to max_quota. */
  min_quota: Type.Integer(),
  max_quota: Type.Integer(),
  stats: CheckinStats
})
export type CheckinStatusView = Static<typeof CheckinStatusView>
export const CheckinStatusResponse = ApiEnvelope(CheckinStatusView)

/** `POST /api/user/checkin`: the quota units credited and the day (UTC) they were credited for. */
export const CheckinResult = Type.Object({
  quota_awarded: Type.Integer(),
  checkin_date: Type.String()
})
export type CheckinResult = Static<typeof CheckinResult>
export const CheckinResponse = ApiEnvelope(CheckinResult)
