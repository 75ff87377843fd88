import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { type Database, findLiveUserBy, type Kysely, type PublicUser, updateUser, type User, type UserUpdate } from '@modelgate/db'
import { type OptionKey, type OptionValues, USER_STATUS } from '@modelgate/contracts'
import { redactSecrets } from '@modelgate/logger'
import { acquireLock, releaseLock } from '@modelgate/service'
import type { FastifyReply, FastifyRequest } from 'fastify'
import Type, { type Static } from 'typebox'
import { ApiError, fail, ok } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import { OM } from '../lib/oauth-messages.js'
import type { Deps } from './deps.js'
import { completeFirstFactor, type SecondStepAnswer } from './two-factor.js'
import { createAccount, type NewAccount, publicUser, USERNAME_MAX } from './users.js'

export type OAuthProvider = 'github' | 'linuxdo' | 'wechat' | 'telegram'

export const PROVIDERS = {
  github: { column: 'github_id', label: 'GitHub' },
  linuxdo: { column: 'linuxdo_id', label: 'LinuxDO' },
  wechat: { column: 'wechat_id', label: 'WeChat' },
  telegram: { column: 'telegram_id', label: 'Telegram' }
} as const satisfies Record<OAuthProvider, { column: keyof UserUpdate, label: string }>

/** An account at a provider, as its API describes it. */
export interface OAuthIdentity {
  /** A built-in provider, or `custom` (a provider the super admin added; `links` says where its bindings live). */
  provider: OAuthProvider | 'custom'
  /** The provider's stable id of the account (GitHub's numeric id, WeChat's openid, ...). */
  id: string
  displayName?: string
  email?: string
  /** A username the provider suggests for a new account; used when valid and free. */
  username?: string
  /** Where the provider's bindings live when not in a users column (custom providers). */
  links?: IdentityLinks
}

/**
 * Where one provider's accounts are bound to users: a users column for the built-in providers,
 * the custom_oauth_links table for the ones the super admin adds. Binding, sign-in and sign-up
 * go through this, so every provider follows the same rules.
 */
export interface IdentityLinks {
  /** Names the provider in locks. */
  key: string
  /** The provider's name in messages. */
  label: string
  /** The start of usernames it registers (`github_12`); short enough to leave room for a suffix. */
  usernamePrefix: string
  /** Whether the provider itself allows new accounts (RegisterEnabled is checked as well). */
  signUpAllowed: boolean
  /** The live user the account is bound to, if any. */
  findOwner: (db: Kysely<Database>, id: string) => Promise<User | undefined>
  /** Binds the account to an existing user; the user as it is now, undefined when it is gone. */
  bind: (db: Kysely<Database>, userId: number, id: string) => Promise<User | undefined>
  /** Adds the binding to a new account's fields (a column, or a step in its transaction). */
  addToAccount: (account: NewAccount, id: string) => void
}

/** The links of a built-in provider: its users column. */
function columnLinks (provider: OAuthProvider): IdentityLinks {
  const { column, label } = PROVIDERS[provider]
  return {
    key: provider,
    label,
    usernamePrefix: provider,
    signUpAllowed: true,
    findOwner: async (db, id) => await findLiveUserBy(db, column, id),
    bind: async (db, userId, id) => {
      const patch: UserUpdate = {}
      patch[column] = id
      return await updateUser(db, userId, patch)
    },
    addToAccount: (account, id) => { account[column] = id }
  }
}

function linksOf (identity: OAuthIdentity): IdentityLinks {
  if (identity.links !== undefined) return identity.links
  if (identity.provider === 'custom') throw new Error('a custom provider identity needs its links')
  return columnLinks(identity.provider)
}

export const STATE_COOKIE = 'oauth_state'
export const STATE_COOKIE_PATH = '/api/oauth'
export const STATE_TTL_S = 600
const UPSTREAM_TIMEOUT_MS = 10_000
const DISPLAY_NAME_MAX = 64
const stateKey = (state: string) => `oauth:state:${state}`

export function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function optionalString (value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
}

/** Strips trailing slashes so `${base}/path` never doubles them. */
export const baseUrl = (url: string) => url.replace(/\/+$/, '')

/**
 * A new single-use state remembering the invite code, and the `flow` of a sign-in the server
 * started itself (a custom provider's PKCE verifier and nonce); valid for 10 minutes.
 */
export async function issueState ({ redis }: Deps<'redis'>, reply: FastifyReply, req: FastifyRequest, aff: string, flow?: Record<string, string>): Promise<string> {
  const state = randomBytes(24).toString('base64url')
  await redis.set(stateKey(state), JSON.stringify(flow === undefined ? { aff } : { aff, flow }), 'EX', STATE_TTL_S)
  // The cookie ties the state to the browser that asked for it, so a callback link carrying
  // someone else's code and state cannot sign a victim into (or bind) the sender's account.
  reply.setCookie(STATE_COOKIE, state, {
    path: STATE_COOKIE_PATH,
    httpOnly: true,
    sameSite: 'lax',
    secure: req.protocol === 'https',
    maxAge: STATE_TTL_S
  })
  return state
}

/** Consumes the callback's state (once, atomically); refuses a missing, unknown, used or foreign one. */
export async function consumeState ({ redis }: Deps<'redis'>, req: FastifyRequest, reply: FastifyReply, state: string | undefined): Promise<{ aff: string, flow?: Record<string, string> }> {
  if (state === undefined || state === '' || req.cookies[STATE_COOKIE] !== state) throw fail(OM.stateInvalid)
  const stored = await redis.getdel(stateKey(state))
  reply.clearCookie(STATE_COOKIE, { path: STATE_COOKIE_PATH })
  if (stored === null) throw fail(OM.stateInvalid)
  let parsed: unknown
  try {
    parsed = JSON.parse(stored)
  } catch {
    parsed = undefined
  }
  const aff = isRecord(parsed) && typeof parsed['aff'] === 'string' ? parsed['aff'] : ''
  const flow = isRecord(parsed) && isRecord(parsed['flow']) ? parsed['flow'] : undefined
  if (flow === undefined) return { aff }
  return { aff, flow: Object.fromEntries(Object.entries(flow).filter((e): e is [string, string] => typeof e[1] === 'string')) }
}

/**
 * Calls a provider and parses its JSON answer. Network failures, timeouts and bodies that are not
 * JSON become a clear refusal; the status and the unchecked body go back to the caller.
 */
export async function fetchProviderJson (
  { outbound }: Deps<'outbound'>,
  req: FastifyRequest,
  provider: OAuthProvider,
  url: string,
  init: { method?: string, headers?: Record<string, string>, body?: string | URLSearchParams }
): Promise<{ status: number, body: unknown }> {
  const label = PROVIDERS[provider].label
  let status: number
  let text: string
  try {
    // Through the outbound guard; never following a redirect, so the secrets sent reach only this host.
    const res = await outbound.fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS) })
    status = res.status
    text = await res.text()
  } catch (err) {
    req.log.warn({ err, provider }, 'OAuth provider request failed')
    throw fail(OM.providerUnavailable, { provider: label })
  }
  try {
    return { status, body: JSON.parse(text) as unknown }
  } catch {
    req.log.warn({ provider, status }, 'OAuth provider answered with a body that is not JSON')
    throw fail(OM.providerBadAnswer, { provider: label })
  }
}

/**
 * The provider's own error text (OAuth `error_description`/`error`, or `message`), shortened. It
 * is shown to the user, so the credentials sent (`known`: the client secret, an access token) and
 * anything shaped like a key are taken out first: a provider or a proxy in front of it may echo them.
 */
export function providerErrorText (body: unknown, known: ReadonlyArray<string | undefined> = []): string | undefined {
  if (!isRecord(body)) return undefined
  const text = optionalString(body['error_description']) ?? optionalString(body['error']) ?? optionalString(body['message'])
  return text === undefined ? undefined : redactSecrets(text, known).slice(0, 200)
}

/** What signing in with an identity uses (registering it, or asking for the second factor). */
export type SignInDeps = Deps<'db' | 'redis' | 'loadOptions' | 'startSession'>

/** What an OAuth callback uses: signing in, or binding to the signed-in caller. */
export type OAuthDeps = SignInDeps & Deps<'publishChange' | 'optionalAuth'>

/** Runs `fn` while holding a short Redis lock on the identity, so two callbacks cannot both register it. */
async function withIdentityLock<T> ({ redis }: Deps<'redis'>, identity: OAuthIdentity, fn: () => Promise<T>): Promise<T> {
  const key = `oauth:lock:${linksOf(identity).key}:${identity.id}`
  const token = await acquireLock(redis, key, 30_000)
  if (token === undefined) throw fail(OM.busy)
  try {
    return await fn()
  } finally {
    await releaseLock(redis, key, token).catch(() => undefined)
  }
}

/** Binds the identity to `user`; refuses one that belongs to another live user. */
export async function bindIdentity (deps: Deps<'db' | 'redis' | 'publishChange'>, user: User, identity: OAuthIdentity): Promise<User> {
  const links = linksOf(identity)
  return await withIdentityLock(deps, identity, async () => {
    const owner = await links.findOwner(deps.db, identity.id)
    if (owner !== undefined && owner.id !== user.id) throw fail(OM.alreadyBound, { provider: links.label })
    if (owner !== undefined) return owner
    const updated = await links.bind(deps.db, user.id, identity.id)
    if (updated === undefined) throw fail(M.userNotFound)
    await deps.publishChange({ kind: 'user', id: updated.id })
    return updated
  })
}

function randomSuffix (length: number): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789'
  return [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('')
}

/**
 * A new account for the identity, named as the provider suggests when that name is valid and free,
 * else `<provider>_<next id>`, or a random suffix when that is taken or too long.
 */
async function registerIdentity (deps: Deps<'db' | 'loadOptions'>, identity: OAuthIdentity, aff: string): Promise<User> {
  const links = linksOf(identity)
  const prefix = links.usernamePrefix
  const row = await deps.db.selectFrom('users').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst()
  const suggested = identity.username
  let candidate = suggested !== undefined && suggested !== '' && suggested.trim() === suggested && [...suggested].length <= USERNAME_MAX ? suggested : `${prefix}_${Number(row?.max ?? 0) + 1}`
  const email = identity.email !== undefined && await findLiveUserBy(deps.db, 'email', identity.email) === undefined ? identity.email : undefined
  const displayName = identity.displayName?.slice(0, DISPLAY_NAME_MAX)
  for (let attempt = 0; attempt < 10; attempt++) {
    if (candidate.length <= USERNAME_MAX && await findLiveUserBy(deps.db, 'username', candidate) === undefined) {
      try {
        const account: NewAccount = { username: candidate, displayName, email, affCode: aff }
        links.addToAccount(account, identity.id)
        return await createAccount(deps, account)
      } catch (err) {
        if (!(err instanceof ApiError && err.msg === M.usernameTaken)) throw err
      }
    }
    candidate = `${prefix}_${randomSuffix(USERNAME_MAX - prefix.length - 1)}`
  }
  throw fail(M.usernameTaken)
}

/**
 * Signs in the live user holding the identity, or registers one (when RegisterEnabled) with the
 * invite code; refuses banned users. Sets the session cookie.
 */
export async function signInWithIdentity (
  deps: SignInDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  identity: OAuthIdentity,
  aff: string
): Promise<{ success: true, message: string, data: PublicUser | SecondStepAnswer }> {
  const links = linksOf(identity)
  const user = await withIdentityLock(deps, identity, async () => {
    const existing = await links.findOwner(deps.db, identity.id)
    if (existing !== undefined) return existing
    if (!(await deps.loadOptions()).bool('RegisterEnabled')) throw fail(OM.registerDisabled)
    if (!links.signUpAllowed) throw fail(OM.signUpClosed, { provider: links.label })
    return await registerIdentity(deps, identity, aff)
  })
  if (user.status !== USER_STATUS.enabled) throw fail(M.userBanned)
  // An account with two-factor sign-in answers `{require_2fa, flow_token}` instead of a session.
  return await completeFirstFactor(deps, req, reply, user)
}

/** `message: 'bind'` is what the console checks to tell a binding from a sign-in. */
export const bound = (user: User) => ok(publicUser(user), 'bind')

/** The end of every OAuth callback: binds to the signed-in caller, else signs in or registers. */
export async function finishOAuth (
  deps: OAuthDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  identity: OAuthIdentity,
  aff: string
): Promise<{ success: true, message: string, data: PublicUser | SecondStepAnswer }> {
  const caller = await deps.optionalAuth(req)
  if (caller !== null) return bound(await bindIdentity(deps, caller.user, identity))
  return await signInWithIdentity(deps, req, reply, identity, aff)
}

/** Fields our console adds to the Telegram widget's answer; Telegram did not sign them. */
const TELEGRAM_UNSIGNED = new Set(['hash', 'lang', 'aff'])
const TELEGRAM_MAX_AGE_S = 24 * 3600
const TELEGRAM_MAX_SKEW_S = 5 * 60

/**
 * Checks a Telegram Login Widget answer: HMAC-SHA256 keyed with SHA-256(bot token) over the
 * sorted `key=value` lines of every signed field, and an auth_date within the last day.
 */
export function verifyTelegramLogin (botToken: string, fields: Record<string, unknown>, nowS: number): OAuthIdentity {
  const signed: Array<[string, string]> = []
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value !== 'string') throw fail(OM.telegramInvalid)
    if (!TELEGRAM_UNSIGNED.has(key)) signed.push([key, value])
  }
  const hash = fields['hash']
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/i.test(hash)) throw fail(OM.telegramInvalid)
  const checkString = signed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join('\n')
  const secret = createHash('sha256').update(botToken).digest()
  const expected = createHmac('sha256', secret).update(checkString).digest()
  if (!timingSafeEqual(expected, Buffer.from(hash, 'hex'))) throw fail(OM.telegramInvalid)

  const id = fields['id']
  const authDate = Number(fields['auth_date'])
  if (typeof id !== 'string' || !/^\d{1,20}$/.test(id) || !Number.isInteger(authDate)) throw fail(OM.telegramInvalid)
  if (nowS - authDate > TELEGRAM_MAX_AGE_S || authDate - nowS > TELEGRAM_MAX_SKEW_S) throw fail(OM.telegramExpired)
  const name = [optionalString(fields['first_name']), optionalString(fields['last_name'])].filter((s) => s !== undefined).join(' ')
  return { provider: 'telegram', id, displayName: name !== '' ? name : optionalString(fields['username']) }
}

/** Query of an authorization-code callback (GitHub, LinuxDO). */
export const CodeCallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 512 })),
  state: Type.Optional(Type.String({ maxLength: 128 }))
})

/**
 * The handler of an authorization-code callback: the provider's switch, the single-use state,
 * the code, the provider's identity, then bind, sign in or register.
 */
export function codeGrantCallback (deps: OAuthDeps, provider: {
  name: string
  enabledOption: OptionKey
  identity: (req: FastifyRequest, options: OptionValues, code: string) => Promise<OAuthIdentity>
}) {
  return async (req: FastifyRequest<{ Querystring: Static<typeof CodeCallbackQuery> }>, reply: FastifyReply) => {
    const options = await deps.loadOptions()
    if (!options.bool(provider.enabledOption)) throw fail(OM.notEnabled, { provider: provider.name })
    const { aff } = await consumeState(deps, req, reply, req.query.state)
    if (req.query.code === undefined || req.query.code === '') throw fail(OM.codeMissing)
    const identity = await provider.identity(req, options, req.query.code)
    return await finishOAuth(deps, req, reply, identity, aff)
  }
}
