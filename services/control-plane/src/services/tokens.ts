import { randomInt } from 'node:crypto'
import { BlockList, isIP } from 'node:net'
import {
  type CreatedTokenView,
  TOKEN_STATUS,
  type TokenCreateBody,
  type TokenSearchQuery,
  type TokenUpdateBody,
  type TokenView
} from '@modelgate/contracts'
import {
  findUserToken,
  insertUserTokens,
  listUserTokens,
  type NewToken,
  type PublicToken,
  setUserTokenStatus,
  softDeleteUserToken,
  type TokenEdit,
  updateUserToken,
  type User
} from '@modelgate/db'
import { tokenKeyBody, tokenKeyHash } from '@modelgate/service'
import { badRequest, fail, forbidden } from '../lib/errors.js'
import { pageOf } from '../lib/paging.js'
import { TM } from '../lib/token-messages.js'
import type { Deps } from './deps.js'
import { usableGroups } from './groups.js'

export const TOKEN_NAME_MAX = 50
export const TOKEN_BATCH_MAX = 100
/** docs/domain.md: a new token's default quota (1 dollar). */
export const DEFAULT_TOKEN_QUOTA = 500_000
/** Live tokens one user may hold. */
export const MAX_LIVE_TOKENS = 1000

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** `length` characters of [A-Za-z0-9]; randomInt draws without modulo bias. */
function randomText (length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)]
  return out
}

/** A new relay key: `sk-` and 48 letters and digits (the gateway reads a dash after them as a channel pin). */
export function generateTokenKey (): string {
  return `sk-${randomText(48)}`
}

/** The form lists show, e.g. `sk-abcd**********wxyz`. */
export function maskTokenKey (key: string): string {
  const body = tokenKeyBody(key)
  return `sk-${body.slice(0, 4)}**********${body.slice(-4)}`
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000)

const isExpired = (expiredTime: number, now: number): boolean => expiredTime !== -1 && expiredTime <= now

/**
 * The status to show: the gateway already refuses an enabled token past its expiry or (when
 * limited) without quota, so the console should not call it enabled.
 */
export function shownStatus (t: Pick<PublicToken, 'status' | 'expired_time' | 'unlimited_quota' | 'remain_quota'>, now: number): number {
  if (t.status !== TOKEN_STATUS.enabled) return t.status
  if (isExpired(t.expired_time, now)) return TOKEN_STATUS.expired
  if (!t.unlimited_quota && t.remain_quota <= 0) return TOKEN_STATUS.exhausted
  return t.status
}

export function tokenView (row: PublicToken, now: number): TokenView {
  const { key_hint: key, ...rest } = row
  return { ...rest, key, status: shownStatus(row, now) }
}

/** The trimmed name, 1 to 50 characters. */
export function checkTokenName (name: string): string {
  const trimmed = name.trim()
  if (trimmed === '') throw fail(TM.nameRequired)
  if ([...trimmed].length > TOKEN_NAME_MAX) throw fail(TM.nameTooLong, { max: TOKEN_NAME_MAX })
  return trimmed
}

function checkExpiry (expiredTime: number, now: number): void {
  if (isExpired(expiredTime, now)) throw fail(TM.expiryInPast)
}

async function checkGroup (deps: Deps<'loadOptions'>, user: User, group: string): Promise<void> {
  // 403 like any other refused privilege; the gateway checks again on every request.
  if (!Object.hasOwn(usableGroups(await deps.loadOptions(), user.group), group)) throw forbidden(TM.groupNotUsable, { group })
}

/** Model names from a comma list: trimmed, blanks and duplicates dropped. */
export function normalizeModelLimits (text: string): string {
  return [...new Set(text.split(',').map((m) => m.trim()).filter((m) => m !== ''))].join(',')
}

/** True for an IPv4/IPv6 address or CIDR range the gateway's allow list can hold. */
function validIpEntry (entry: string): boolean {
  const slash = entry.indexOf('/')
  const addr = slash === -1 ? entry : entry.slice(0, slash)
  const family = isIP(addr)
  if (family === 0) return false
  const type = family === 4 ? 'ipv4' : 'ipv6'
  // The gateway loads the list into a BlockList: whatever that refuses is refused here too.
  try {
    if (slash === -1) {
      new BlockList().addAddress(addr, type)
      return true
    }
    const bits = entry.slice(slash + 1)
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) return false
    new BlockList().addSubnet(addr, Number(bits), type)
    return true
  } catch {
    return false
  }
}

/** The IP allow list, one entry per line (blank lines and duplicates dropped); a bad entry is refused. */
export function normalizeAllowIps (text: string): string {
  const entries = [...new Set(text.split(/[\r\n,]+/).map((e) => e.trim()).filter((e) => e !== ''))]
  const bad = entries.find((e) => !validIpEntry(e))
  if (bad !== undefined) throw fail(TM.badAllowIp, { entry: bad.slice(0, 64) })
  return entries.join('\n')
}

/** A page of the user's tokens, optionally filtered by name and by key. */
export async function listTokens (deps: Deps<'db'>, userId: number, q: TokenSearchQuery) {
  const { page, pageSize, offset } = pageOf(q)
  const keyword = q.keyword?.trim() ?? ''
  const key = q.token?.trim() ?? ''
  const { items, total } = await listUserTokens(deps.db, {
    userId,
    keyword,
    // A full key is found by its hash (the only form stored); anything else by the masked key.
    key: key === '' ? undefined : { keyHash: tokenKeyHash(key), keyFragment: key },
    offset,
    limit: pageSize
  })
  const now = nowSeconds()
  return { items: items.map((t) => tokenView(t, now)), page, page_size: pageSize, total }
}

/** A live token of the user; another user's token is not found, exactly like a missing one. */
export async function getToken (deps: Deps<'db'>, userId: number, id: number): Promise<TokenView> {
  const row = await findUserToken(deps.db, userId, id)
  if (row === undefined) throw fail(TM.tokenNotFound)
  return tokenView(row, nowSeconds())
}

/** The full key of one of the user's tokens. */
export async function revealTokenKey (deps: Deps<'db' | 'secrets'>, userId: number, id: number): Promise<string> {
  const row = await findUserToken(deps.db, userId, id)
  if (row === undefined) throw fail(TM.tokenNotFound)
  return deps.secrets.open(row.key_encrypted)
}

/**
 * Creates `count` tokens with the same settings. The first keeps the name, the others get a
 * random suffix. The answer carries each full key, the one time it is shown without a reveal.
 */
export async function createTokens (deps: Deps<'db' | 'secrets' | 'loadOptions' | 'publishChange'>, user: User, body: TokenCreateBody): Promise<CreatedTokenView[]> {
  const now = nowSeconds()
  const name = checkTokenName(body.name)
  const count = body.count ?? 1
  if (count < 1 || count > TOKEN_BATCH_MAX) throw fail(TM.countRange, { max: TOKEN_BATCH_MAX })
  const expiredTime = body.expired_time ?? -1
  checkExpiry(expiredTime, now)
  const group = body.group ?? ''
  if (group !== '') await checkGroup(deps, user, group)
  const settings = {
    user_id: user.id,
    status: TOKEN_STATUS.enabled,
    remain_quota: body.remain_quota ?? DEFAULT_TOKEN_QUOTA,
    unlimited_quota: body.unlimited_quota ?? false,
    expired_time: expiredTime,
    model_limits_enabled: body.model_limits_enabled ?? false,
    model_limits: normalizeModelLimits(body.model_limits ?? ''),
    allow_ips: normalizeAllowIps(body.allow_ips ?? ''),
    group,
    // The contract bounds them (0 is no limit); the gateways enforce them.
    rpm_limit: body.rpm_limit ?? 0,
    tpm_limit: body.tpm_limit ?? 0,
    concurrency_limit: body.concurrency_limit ?? 0,
    deleted_at: null
  }
  const keys = new Map<string, string>()
  const rows: NewToken[] = Array.from({ length: count }, (_, i) => {
    const key = generateTokenKey()
    const keyHash = tokenKeyHash(key)
    keys.set(keyHash, key)
    return {
      ...settings,
      name: i === 0 ? name : `${name}-${randomText(6)}`,
      key_hash: keyHash,
      key_encrypted: deps.secrets.seal(key),
      key_hint: maskTokenKey(key)
    }
  })
  const created = await insertUserTokens(deps.db, user.id, rows, MAX_LIVE_TOKENS)
  if (created === undefined) throw fail(TM.tooManyTokens, { max: MAX_LIVE_TOKENS })
  created.sort((a, b) => a.id - b.id)
  // A gateway may hold a "no such key" answer for a key someone tried before it existed.
  for (const row of created) await deps.publishChange({ kind: 'token', id: row.id })
  return created.map(({ key_hash: keyHash, ...row }) => ({ ...tokenView(row, now), full_key: keys.get(keyHash)! }))
}

/**
 * A full update (docs/domain.md). An expired or exhausted token becomes enabled again when
 * the edit makes it valid; status 1 in the body enables a disabled one, refused while the edited
 * token would still be expired or exhausted.
 */
export async function updateToken (deps: Deps<'db' | 'loadOptions' | 'quota' | 'publishChange'>, user: User, body: TokenUpdateBody): Promise<TokenView> {
  const now = nowSeconds()
  const row = await findUserToken(deps.db, user.id, body.id)
  if (row === undefined) throw fail(TM.tokenNotFound)
  const edit: TokenEdit = {}
  if (body.name !== undefined) edit.name = checkTokenName(body.name)
  if (body.expired_time !== undefined) {
    // The console sends the whole token back: an expiry that passed while unchanged is no error.
    if (body.expired_time !== row.expired_time) checkExpiry(body.expired_time, now)
    edit.expired_time = body.expired_time
  }
  if (body.unlimited_quota !== undefined) edit.unlimited_quota = body.unlimited_quota
  if (body.model_limits_enabled !== undefined) edit.model_limits_enabled = body.model_limits_enabled
  if (body.model_limits !== undefined) edit.model_limits = normalizeModelLimits(body.model_limits)
  if (body.allow_ips !== undefined) edit.allow_ips = normalizeAllowIps(body.allow_ips)
  if (body.rpm_limit !== undefined) edit.rpm_limit = body.rpm_limit
  if (body.tpm_limit !== undefined) edit.tpm_limit = body.tpm_limit
  if (body.concurrency_limit !== undefined) edit.concurrency_limit = body.concurrency_limit
  if (body.group !== undefined) {
    // Kept when unchanged: the gateway checks a group is still usable on every request.
    if (body.group !== '' && body.group !== row.group) await checkGroup(deps, user, body.group)
    edit.group = body.group
  }
  // Applied as a difference in SQL, so what a settlement spends meanwhile stays spent.
  const quotaDelta = body.remain_quota !== undefined ? body.remain_quota - row.remain_quota : 0
  let status: 'enable' | 'disable' | undefined
  if (body.status === TOKEN_STATUS.disabled) {
    status = 'disable'
  } else if (body.status === TOKEN_STATUS.enabled && row.status !== TOKEN_STATUS.enabled) {
    if (isExpired(edit.expired_time ?? row.expired_time, now)) throw fail(TM.tokenExpired)
    if (!(edit.unlimited_quota ?? row.unlimited_quota) && row.remain_quota + quotaDelta <= 0) throw fail(TM.tokenExhausted)
    status = 'enable'
  }
  const updated = await updateUserToken(deps.db, user.id, row.id, { edit, quotaDelta, status, now })
  if (updated === undefined) throw fail(TM.tokenNotFound)
  // The gateways spend from the cached balance: move it by the same amount as Postgres.
  await deps.quota.adjust('token', row.id, quotaDelta, user.id)
  await deps.publishChange({ kind: 'token', id: row.id })
  return tokenView(updated, now)
}

/** Enables (1) or disables (2) a token; enabling is refused while it is expired or exhausted. */
export async function setTokenStatus (deps: Deps<'db' | 'publishChange'>, userId: number, id: number, status: number | undefined): Promise<TokenView> {
  if (status !== TOKEN_STATUS.enabled && status !== TOKEN_STATUS.disabled) throw badRequest(TM.statusOneOrTwo)
  const now = nowSeconds()
  const updated = await setUserTokenStatus(deps.db, userId, id, status, now)
  if (updated === undefined) {
    const row = await findUserToken(deps.db, userId, id)
    if (row === undefined) throw fail(TM.tokenNotFound)
    throw fail(isExpired(row.expired_time, now) ? TM.tokenExpired : TM.tokenExhausted)
  }
  await deps.publishChange({ kind: 'token', id })
  return tokenView(updated, now)
}

/** Soft-deletes a token and drops what the gateways hold of it. */
export async function deleteToken (deps: Deps<'db' | 'quota' | 'publishChange'>, userId: number, id: number): Promise<void> {
  const deleted = await softDeleteUserToken(deps.db, userId, id, nowSeconds())
  if (deleted === undefined) throw fail(TM.tokenNotFound)
  // Announced first: once no gateway admits the key, nothing reloads the balance dropped next.
  await deps.publishChange({ kind: 'token', id })
  await deps.quota.forget('token', id, userId)
}
