import { TOKEN_STATUS, USER_STATUS, ROLES } from '@modelgate/contracts'
import { BlockList, isIP } from 'node:net'
import type { FastifyRequest } from 'fastify'
import type { CallerCache, CallerRecord } from './callers.js'
import { RelayError, RM } from './errors.js'
import type { RelayState } from './state.js'

/** The authenticated caller of a relay request. */
export interface Caller {
  record: CallerRecord
  /** Token group, else the user's group. */
  group: string
  /** An administrator's `sk-KEY-CHANNELID` pin. */
  pinnedChannel?: number
}

/** Who pays for a caller's request: the columns usage events and task rows share. */
export function payer (caller: Caller): { user_id: number, username: string, token_id: number, token_name: string, unlimited_token: boolean } {
  const { token, user } = caller.record
  return { user_id: user.id, username: user.username, token_id: token.id, token_name: token.name, unlimited_token: token.unlimited }
}

/** The key from `Authorization: Bearer`, `x-api-key`, `x-goog-api-key` or `?key=`, in that order. */
export function extractKey (req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization
  if (typeof auth === 'string' && auth.trim() !== '') return auth.trim().replace(/^Bearer\s+/i, '').trim()
  for (const h of ['x-api-key', 'x-goog-api-key'] as const) {
    const v = req.headers[h]
    if (typeof v === 'string' && v.trim() !== '') return v.trim()
  }
  const q = (req.query as Record<string, unknown> | undefined)?.['key']
  return typeof q === 'string' && q !== '' ? q : undefined
}

const unauthorized = (msg: typeof RM[keyof typeof RM], code = 'invalid_api_key') => new RelayError(401, 'invalid_request_error', code, msg)
const forbidden = (msg: typeof RM[keyof typeof RM], vars: Record<string, string> = {}, code = 'forbidden') => new RelayError(403, 'invalid_request_error', code, msg, vars)

function ipAllowed (allow: string[], ip: string): boolean {
  if (allow.length === 0) return true
  const list = new BlockList()
  const family = (addr: string) => (isIP(addr) === 6 ? 'ipv6' : 'ipv4')
  for (const entry of allow) {
    const [addr = '', bits] = entry.split('/')
    if (isIP(addr) === 0) continue
    if (bits === undefined) list.addAddress(addr, family(addr))
    else list.addSubnet(addr, Number(bits), family(addr))
  }
  const plain = ip.startsWith('::ffff:') ? ip.slice(7) : ip
  return list.check(plain, family(plain))
}

/**
 * Authenticates a relay key and applies the token and user checks (messages in relay/errors.ts), each with
 * its own message. Model and group checks need the model and happen in {@link checkModel}.
 */
export async function authenticate (cache: CallerCache, req: FastifyRequest): Promise<Caller> {
  const raw = extractKey(req)
  if (raw === undefined) throw unauthorized(RM.noKey)
  // sk-KEY-CHANNELID: the channel id after the last dash, for administrators.
  let key = raw
  let pinnedChannel: number | undefined
  // Key bodies are letters and digits only, so a dash can only introduce a pin.
  const pin = /^((?:sk-)?[A-Za-z0-9]{16,})-(\d{1,9})$/.exec(raw)
  if (pin !== null && pin[1] !== undefined) {
    key = pin[1]
    pinnedChannel = Number(pin[2])
  }
  const record = await cache.find(key)
  if (record === null) throw unauthorized(RM.invalidKey)
  const { token, user } = record
  if (user.deleted) throw unauthorized(RM.userDeleted)
  if (user.status !== USER_STATUS.enabled) throw forbidden(RM.userBanned, {}, 'user_banned')
  const now = Math.floor(Date.now() / 1000)
  if (token.status === TOKEN_STATUS.expired || (token.expiredTime !== -1 && token.expiredTime <= now)) throw unauthorized(RM.tokenExpired, 'token_expired')
  if (token.status === TOKEN_STATUS.exhausted || (!token.unlimited && token.remainQuota <= 0)) throw forbidden(RM.tokenExhausted, {}, 'insufficient_quota')
  if (token.status !== TOKEN_STATUS.enabled) throw unauthorized(RM.tokenDisabled, 'token_disabled')
  if (!ipAllowed(token.allowIps, req.ip)) throw forbidden(RM.ipNotAllowed, {}, 'ip_not_allowed')
  if (pinnedChannel !== undefined && user.role < ROLES.admin) throw forbidden(RM.pinNotAllowed, {}, 'channel_pin_not_allowed')
  return { record, group: token.group !== '' ? token.group : user.group, pinnedChannel }
}

/**
 * The token's group is usable by its owner now: their own group or one of UserUsableGroups. Checked
 * on every request, so removing a group (or moving the user) stops its tokens at once.
 */
export function checkGroup (caller: Caller, usableGroups: ReadonlySet<string>): void {
  if (caller.group !== caller.record.user.group && !usableGroups.has(caller.group)) {
    throw forbidden(RM.groupNotAllowed, { group: caller.group }, 'group_not_allowed')
  }
}

/** Model limits of the token and the group's availability to the user. */
export function checkModel (caller: Caller, model: string, usableGroups: ReadonlySet<string>): void {
  const limits = caller.record.token.modelLimits
  if (limits !== null && !limits.includes(model)) throw forbidden(RM.modelNotAllowed, { model }, 'model_not_allowed')
  checkGroup(caller, usableGroups)
}

/** The models the caller may use: its group's (the group checked first), within the token's model limits. */
export function callerModels (caller: Caller, state: RelayState): string[] {
  checkGroup(caller, state.usableGroups)
  const limits = caller.record.token.modelLimits
  return state.modelsOf(caller.group).filter((m) => limits === null || limits.includes(m))
}
