import type { SessionView } from '@modelgate/contracts'
import { revokedSessionKey } from '@modelgate/contracts'
import { bumpSessionVersion, listUserSessions, revokeUserSessions, type UserSession } from '@modelgate/db'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from './deps.js'

const nowS = (): number => Math.floor(Date.now() / 1000)

/**
 * Also marks revoked token ids in Redis until they would expire: the gateway's playground checks
 * sessions by the user's session version and these markers (the control plane by the rows).
 */
async function forget ({ redis }: Deps<'redis'>, revoked: ReadonlyArray<Pick<UserSession, 'id' | 'expires_at'>>, now: number): Promise<void> {
  if (revoked.length === 0) return
  const multi = redis.multi()
  for (const s of revoked) multi.set(revokedSessionKey(s.id), '1', 'EX', Math.max(1, s.expires_at - now))
  await multi.exec()
}

/**
 * Ends sessions of user `userId`: every one but `except` (a session's token id), or, without
 * `except`, every one, including sessions signed before sessions were kept (the user's session
 * version is bumped too). For password changes, a two-factor reset and "sign out other devices".
 * Returns how many registered sessions were ended.
 */
export async function revokeSessions (deps: Deps<'db' | 'redis'>, userId: number, opts: { except?: string } = {}): Promise<number> {
  const now = nowS()
  if (opts.except === undefined) await bumpSessionVersion(deps.db, userId)
  const revoked = await revokeUserSessions(deps.db, userId, now, { except: opts.except })
  await forget(deps, revoked, now)
  return revoked.length
}

/** Ends one session of user `userId` by id; false when it is not one of theirs that still holds. */
export async function revokeSession (deps: Deps<'db' | 'redis'>, userId: number, id: string): Promise<boolean> {
  const now = nowS()
  const revoked = await revokeUserSessions(deps.db, userId, now, { only: id })
  await forget(deps, revoked, now)
  return revoked.length > 0
}

/**
 * Ends every session of the caller but the request's own, and keeps that one going: the session
 * version is bumped (so tokens never registered end too) and this session's cookie signed again.
 * Returns how many registered sessions were ended.
 */
export async function revokeOtherSessions (deps: Deps<'db' | 'redis' | 'renewSession'>, req: FastifyRequest, reply: FastifyReply): Promise<number> {
  const auth = req.auth!
  const now = nowS()
  const version = await bumpSessionVersion(deps.db, auth.user.id)
  const revoked = await revokeUserSessions(deps.db, auth.user.id, now, { except: auth.session?.jti })
  await forget(deps, revoked, now)
  if (version !== undefined) await deps.renewSession(req, reply, { ...auth.user, session_version: version })
  return revoked.length
}

/** The caller's sessions that still hold: this one first, then the most recently seen. */
export async function listSessions ({ db }: Deps<'db'>, req: FastifyRequest): Promise<SessionView[]> {
  const { user, session } = req.auth!
  const rows = await listUserSessions(db, user.id, user.session_version, nowS())
  const views = rows.map((r): SessionView => ({
    id: r.id,
    ...describeUserAgent(r.user_agent),
    user_agent: r.user_agent,
    ip: r.ip,
    created_at: r.created_at,
    last_seen_at: r.last_seen_at,
    expires_at: r.expires_at,
    current: r.id === session?.jti
  }))
  return [...views.filter((v) => v.current), ...views.filter((v) => !v.current)]
}

const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\b(?:OPR|Opera)\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\bYaBrowser\/(\d+)/, 'Yandex Browser'],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, 'Firefox'],
  [/\b(?:HeadlessChrome|Chrome|CriOS)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)(?:\.\d+)*(?: Mobile\/\S+)? Safari\//, 'Safari'],
  [/^curl\/(\d+(?:\.\d+)*)/, 'curl'],
  [/^Wget\/(\d+(?:\.\d+)*)/, 'Wget'],
  [/^python-requests\/(\d+(?:\.\d+)*)/, 'Python Requests'],
  [/^okhttp\/(\d+(?:\.\d+)*)/, 'OkHttp'],
  [/^Go-http-client\/(\d+(?:\.\d+)*)/, 'Go HTTP client']
]

const SYSTEMS: ReadonlyArray<[RegExp, string | ((m: RegExpMatchArray) => string)]> = [
  [/\bWindows NT\b/, 'Windows'],
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid(?: (\d+))?/, (m) => m[1] === undefined ? 'Android' : `Android ${m[1]}`],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\b(?:Macintosh|Mac OS X)\b/, 'macOS'],
  [/\bLinux\b/, 'Linux']
]

/**
 * The browser and system a User-Agent describes, readable: `{ browser: 'Chrome 131', os: 'Windows' }`,
 * `{ browser: 'Safari 17', os: 'iPhone' }`, `{ browser: 'curl 8.5.0', os: '' }`; '' for what is not recognised.
 */
export function describeUserAgent (userAgent: string): { browser: string, os: string } {
  let browser = ''
  for (const [pattern, name] of BROWSERS) {
    const m = pattern.exec(userAgent)
    if (m !== null) {
      browser = `${name} ${m[1] ?? ''}`.trim()
      break
    }
  }
  let system = ''
  for (const [pattern, name] of SYSTEMS) {
    const m = pattern.exec(userAgent)
    if (m !== null) {
      system = typeof name === 'string' ? name : name(m)
      break
    }
  }
  return { browser, os: system }
}
