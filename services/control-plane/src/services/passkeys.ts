import { createHash, getRandomValues, randomBytes } from 'node:crypto'
import {
  type PasskeyAuthenticationResponse,
  type PasskeyList,
  type PasskeyRegistrationResponse,
  PASSKEYS_PER_USER_MAX,
  type PasskeyView,
  USER_STATUS
} from '@modelgate/contracts'
import {
  acceptPasskeyAssertion,
  countPasskeys,
  findPasskeyByCredentialId,
  findUserById,
  findUserHandle,
  insertPasskey,
  listPasskeys,
  type Passkey,
  type User
} from '@modelgate/db'
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse
} from '@simplewebauthn/server'
import type { FastifyRequest } from 'fastify'
import { ApiError, fail } from '../lib/errors.js'
import { M } from '../lib/messages.js'
import { PM } from '../lib/passkey-messages.js'
import type { Deps } from './deps.js'
import { clearLoginFailures, countLoginFailure, refuseWhileLocked } from './login-guard.js'
import { verificationSubject } from './secure-verify.js'
import { describeUserAgent } from './sessions.js'

/**
 * How long a ceremony's challenge waits for the browser's answer (also the timeout the browser
 * is given). A challenge is spent by the first answer that names it, right or wrong.
 */
export const CHALLENGE_TTL_S = 5 * 60

/** What the passkey ceremonies use. */
export type PasskeyDeps = Deps<'db' | 'redis' | 'log' | 'loadOptions'>

/** Registration and verification challenges, found by the challenge the answer signed (bound to the user, and for a verification to the session). */
export const challengeKey = (challenge: string): string => `passkey:challenge:${challenge}`
/** Passwordless sign-ins, found by the flow id the browser brings back (bound to that flow). */
export const loginFlowKey = (flowId: string): string => `passkey:login:${flowId}`

const nowS = (): number => Math.floor(Date.now() / 1000)

/** A ceremony waiting for its answer, as kept in Redis (the expiry repeated, so the check does not depend on Redis expiring on time). */
type Ceremony =
  | { kind: 'register', uid: number, handle: string, exp: number }
  | { kind: 'verify', uid: number, sub: string, exp: number }
interface LoginFlow { challenge: string, exp: number }

/** Who the passkeys are for, and the page addresses whose answers count (WebAuthn's relying party). */
export interface RelyingParty {
  /** The RP ID: the domain the credentials are scoped to. */
  id: string
  name: string
  /** Allowed origins (`scheme://host[:port]`), each within {@link id}. */
  origins: string[]
}

// A domain name (what browsers accept as an RP ID): labels of letters, digits and hyphens; not an IP address.
const DOMAIN = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/
export const isDomainName = (host: string): boolean => DOMAIN.test(host) && !/^[\d.]+$/.test(host)

/**
 * `PasskeyOrigins` as a list: comma- or space-separated origins (`https://host[:port]`), each
 * reduced to its origin form; undefined entries are not origins (a path, another scheme).
 */
export function parseOrigins (text: string): Array<string | undefined> {
  return text.split(/[\s,]+/).filter((s) => s !== '').map((s) => {
    try {
      const url = new URL(s)
      // Only scheme, host and port: anything else (a path, a query, credentials) is a mistake.
      const bare = url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '' && !s.endsWith('?') && !s.endsWith('#')
      return (url.protocol === 'https:' || url.protocol === 'http:') && bare ? url.origin : undefined
    } catch {
      return undefined
    }
  })
}

const withinRpId = (host: string, rpId: string): boolean => host === rpId || host.endsWith(`.${rpId}`)

/**
 * The relying party of a ceremony on this request, from the options: `PasskeyRPID` when set,
 * else the host the request was made to (`req.hostname`, which names the client's Host only
 * through a trusted proxy's X-Forwarded-Host); `PasskeyOrigins` when set, else the request's own
 * origin (`req.protocol` + `req.host`). Refuses when passkeys are off, when the RP ID is not a
 * domain name, when an allowed origin lies outside the RP ID, and when the browser's Origin
 * header names a page that is not allowed.
 */
export async function relyingParty (deps: Deps<'loadOptions'>, req: FastifyRequest): Promise<RelyingParty> {
  const o = await deps.loadOptions()
  if (!o.bool('PasskeyEnabled')) throw fail(PM.disabled)
  const id = (o.str('PasskeyRPID').trim() || req.hostname).toLowerCase()
  if (!isDomainName(id)) throw fail(PM.rpIdInvalid, { rpId: id })
  const configured = parseOrigins(o.str('PasskeyOrigins')).filter((s): s is string => s !== undefined)
  const origins = configured.length > 0 ? configured : [new URL(`${req.protocol}://${req.host}`).origin]
  for (const origin of origins) {
    if (!withinRpId(new URL(origin).hostname, id)) throw fail(PM.originOutsideRpId, { origin, rpId: id })
  }
  const asked = req.headers.origin
  if (typeof asked === 'string' && asked !== 'null') checkOrigin({ id, name: '', origins }, asked)
  return { id, name: o.str('SystemName').trim() || 'ModelGate', origins }
}

/** Whether passkeys can be used on the site now (PasskeyEnabled). */
export async function passkeysAvailable (deps: Deps<'loadOptions'>): Promise<boolean> {
  return (await deps.loadOptions()).bool('PasskeyEnabled')
}

function checkOrigin (rp: RelyingParty, origin: string): void {
  if (!rp.origins.includes(origin)) throw fail(PM.foreignOrigin, { origin: origin.slice(0, 200), allowed: rp.origins.join(', ') })
}

/** What the browser signed about the ceremony (WebAuthn's CollectedClientData), or a refusal. */
function clientDataOf (clientDataJSON: string): { type: string, challenge: string, origin: string } {
  try {
    const data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as Record<string, unknown>
    if (typeof data['type'] === 'string' && typeof data['challenge'] === 'string' && typeof data['origin'] === 'string') {
      return { type: data['type'], challenge: data['challenge'], origin: data['origin'] }
    }
  } catch {
    // Not base64url JSON: refused below.
  }
  throw fail(PM.responseInvalid)
}

/** Spends the ceremony of a challenge (the first answer naming it takes it, right or wrong); undefined when there is none or it expired. */
async function takeCeremony (deps: Deps<'redis'>, challenge: string): Promise<Ceremony | undefined> {
  if (!/^[\w-]{16,128}$/.test(challenge)) return undefined
  const text = await deps.redis.getdel(challengeKey(challenge))
  if (text === null) return undefined
  try {
    const ceremony = JSON.parse(text) as Ceremony
    return typeof ceremony.exp === 'number' && ceremony.exp > nowS() ? ceremony : undefined
  } catch {
    return undefined
  }
}

async function newChallenge (deps: Deps<'redis'>, make: (challenge: Uint8Array<ArrayBuffer>) => Promise<{ challenge: string }>, ceremony: Ceremony | undefined): Promise<{ challenge: string }> {
  const options = await make(getRandomValues(new Uint8Array(32)))
  if (ceremony !== undefined) await deps.redis.set(challengeKey(options.challenge), JSON.stringify(ceremony), 'EX', CHALLENGE_TTL_S)
  return options
}

/** A failure of the WebAuthn library as the console says it (its own words go to the log only). */
function refusalOf (deps: Deps<'log'>, rp: RelyingParty, err: unknown): ApiError {
  if (err instanceof ApiError) return err
  const e = err as { name?: string, message?: string }
  deps.log.info({ err }, 'passkey answer refused')
  if (e.name === 'UnexpectedRPIDHash') return fail(PM.wrongRpId, { rpId: rp.id })
  if (/user verification/i.test(e.message ?? '')) return fail(PM.userVerificationMissing)
  if (/counter/i.test(e.message ?? '')) return fail(PM.counterRegressed)
  return fail(PM.responseInvalid)
}

export function passkeyView (p: Passkey): PasskeyView {
  return {
    id: p.id,
    name: p.name,
    created_at: p.created_at,
    last_used_at: p.last_used_at,
    backed_up: p.backed_up,
    device_type: p.device_type,
    transports: p.transports
  }
}

/** A user's passkeys as `GET /api/user/passkey` answers them. */
export async function passkeyList (deps: Deps<'db' | 'loadOptions'>, userId: number): Promise<PasskeyList> {
  const [rows, available] = await Promise.all([listPasskeys(deps.db, userId), passkeysAvailable(deps)])
  const used = rows.map((p) => p.last_used_at).filter((t): t is number => t !== null)
  return { enabled: rows.length > 0, last_used_at: used.length > 0 ? Math.max(...used) : null, available, items: rows.map(passkeyView) }
}

/**
 * The options of a new passkey for the signed-in user: a discoverable credential (so it signs in
 * without a username) with user verification, none of the user's existing ones again. The
 * challenge waits five minutes for `finishRegistration`.
 */
export async function registrationOptions (deps: PasskeyDeps, req: FastifyRequest): Promise<unknown> {
  const user = req.auth!.user
  const rp = await relyingParty(deps, req)
  const existing = await listPasskeys(deps.db, user.id)
  if (existing.length >= PASSKEYS_PER_USER_MAX) throw fail(PM.limit, { max: PASSKEYS_PER_USER_MAX })
  // The same handle for every passkey of an account: an authenticator then keeps one per account.
  const handle = await findUserHandle(deps.db, user.id) ?? randomBytes(32).toString('base64url')
  return await newChallenge(deps, async (challenge) => await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.username,
    userDisplayName: user.display_name || user.username,
    userID: new Uint8Array(Buffer.from(handle, 'base64url')),
    challenge,
    timeout: CHALLENGE_TTL_S * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' }
  }), { kind: 'register', uid: user.id, handle, exp: nowS() + CHALLENGE_TTL_S })
}

/** Checks the browser's answer to {@link registrationOptions} and stores the new passkey (public key only). */
export async function finishRegistration (deps: PasskeyDeps, req: FastifyRequest, response: PasskeyRegistrationResponse, name: string | undefined): Promise<Passkey> {
  const user = req.auth!.user
  const rp = await relyingParty(deps, req)
  const clientData = clientDataOf(response.response.clientDataJSON)
  const ceremony = await takeCeremony(deps, clientData.challenge)
  if (ceremony?.kind !== 'register' || ceremony.uid !== user.id) throw fail(PM.challengeExpired)
  checkOrigin(rp, clientData.origin)
  const result = await verifyRegistrationResponse({
    response: { ...response, clientExtensionResults: response.clientExtensionResults ?? {} } as RegistrationResponseJSON,
    expectedChallenge: clientData.challenge,
    expectedOrigin: rp.origins,
    expectedRPID: rp.id,
    requireUserVerification: true
  }).catch((err: unknown) => { throw refusalOf(deps, rp, err) })
  if (!result.verified) throw fail(PM.responseInvalid)
  const info = result.registrationInfo
  const device = describeUserAgent(String(req.headers['user-agent'] ?? ''))
  const fallback = [device.browser, device.os].filter((s) => s !== '').join(' · ') || req.t(PM.defaultName)
  const saved = await insertPasskey(deps.db, {
    user_id: user.id,
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey),
    counter: info.credential.counter,
    transports: response.response.transports ?? info.credential.transports ?? [],
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp,
    user_handle: ceremony.handle,
    name: name?.trim() || fallback
  }, PASSKEYS_PER_USER_MAX)
  if (saved === 'limit') throw fail(PM.limit, { max: PASSKEYS_PER_USER_MAX })
  if (saved === 'duplicate') throw fail(PM.duplicate)
  return saved
}

/**
 * Checks an assertion of `passkey` for `challenge` and records it: the origin and RP ID first
 * (each refusal says which), the signature counter (a counter that does not grow, once
 * non-zero, is a cloned authenticator), then the signature and user verification; the new
 * counter is stored by a statement that matches only while the stored one is lower, so the same
 * assertion twice at once counts once.
 */
async function acceptAssertion (deps: Deps<'db' | 'log'>, rp: RelyingParty, challenge: string, passkey: Passkey, response: PasskeyAuthenticationResponse): Promise<void> {
  const clientData = clientDataOf(response.response.clientDataJSON)
  if (clientData.type !== 'webauthn.get') throw fail(PM.responseInvalid)
  checkOrigin(rp, clientData.origin)
  // An old assertion brought to a new ceremony signed another challenge.
  if (clientData.challenge !== challenge) throw fail(PM.challengeExpired)
  const authData = Buffer.from(response.response.authenticatorData, 'base64url')
  if (authData.length < 37) throw fail(PM.responseInvalid)
  if (!authData.subarray(0, 32).equals(createHash('sha256').update(rp.id).digest())) throw fail(PM.wrongRpId, { rpId: rp.id })
  const counter = authData.readUInt32BE(33)
  if ((counter > 0 || passkey.counter > 0) && counter <= passkey.counter) {
    deps.log.warn({ passkeyId: passkey.id, userId: passkey.user_id, stored: passkey.counter, presented: counter }, 'passkey counter did not increase: possible cloned authenticator')
    throw fail(PM.counterRegressed)
  }
  const userHandle = response.response.userHandle
  if (userHandle !== undefined && userHandle !== '' && userHandle !== passkey.user_handle) throw fail(PM.responseInvalid)
  let result
  try {
    result = await verifyAuthenticationResponse({
      response: { ...response, clientExtensionResults: response.clientExtensionResults ?? {} } as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: { id: passkey.credential_id, publicKey: new Uint8Array(passkey.public_key), counter: passkey.counter, transports: passkey.transports },
      requireUserVerification: true
    })
  } catch (err) {
    throw refusalOf(deps, rp, err)
  }
  if (!result.verified) throw fail(PM.responseInvalid)
  if (!await acceptPasskeyAssertion(deps.db, passkey.id, result.authenticationInfo.newCounter, result.authenticationInfo.credentialBackedUp)) {
    throw fail(PM.counterRegressed)
  }
}

/**
 * The options of a passwordless sign-in: no username, any discoverable credential of this site,
 * with user verification. The flow id names the challenge (five minutes, single use).
 */
export async function loginOptions (deps: PasskeyDeps, req: FastifyRequest): Promise<{ options: unknown, flow_id: string }> {
  const rp = await relyingParty(deps, req)
  const flowId = randomBytes(24).toString('base64url')
  const options = await newChallenge(deps, async (challenge) => await generateAuthenticationOptions({
    rpID: rp.id,
    challenge,
    timeout: CHALLENGE_TTL_S * 1000,
    userVerification: 'required'
  }), undefined)
  const flow: LoginFlow = { challenge: options.challenge, exp: nowS() + CHALLENGE_TTL_S }
  await deps.redis.set(loginFlowKey(flowId), JSON.stringify(flow), 'EX', CHALLENGE_TTL_S)
  return { options, flow_id: flowId }
}

/**
 * The user a passwordless sign-in proves, or a refusal. Locked names and addresses are refused
 * first; an unknown passkey counts against the address, a refused answer against the address
 * and the account's name (the same lockout as wrong passwords); a disabled account is refused
 * after the passkey proved it. The caller starts the session.
 */
export async function finishLogin (deps: PasskeyDeps, req: FastifyRequest, flowId: string, response: PasskeyAuthenticationResponse): Promise<User> {
  const rp = await relyingParty(deps, req)
  await refuseWhileLocked(deps, req, [])
  const text = /^[\w-]{20,128}$/.test(flowId) ? await deps.redis.getdel(loginFlowKey(flowId)) : null
  const flow = text === null ? undefined : JSON.parse(text) as LoginFlow
  if (flow === undefined || flow.exp <= nowS()) throw fail(PM.challengeExpired)
  const passkey = await findPasskeyByCredentialId(deps.db, response.id)
  const user = passkey === undefined ? undefined : await findUserById(deps.db, passkey.user_id)
  if (passkey === undefined || user === undefined) {
    await countLoginFailure(deps, req, [])
    throw fail(PM.unknownCredential)
  }
  await refuseWhileLocked(deps, req, [user.username])
  try {
    await acceptAssertion(deps, rp, flow.challenge, passkey, response)
  } catch (err) {
    if (err instanceof ApiError) await countLoginFailure(deps, req, [user.username])
    throw err
  }
  if (user.status !== USER_STATUS.enabled) throw fail(M.userBanned)
  await clearLoginFailures(deps, [user.username])
  return user
}

/** The options of a secure verification with one of the caller's passkeys (bound to this session). */
export async function verificationOptions (deps: PasskeyDeps, req: FastifyRequest): Promise<unknown> {
  const user = req.auth!.user
  const rp = await relyingParty(deps, req)
  const passkeys = await listPasskeys(deps.db, user.id)
  if (passkeys.length === 0) throw fail(PM.none)
  return await newChallenge(deps, async (challenge) => await generateAuthenticationOptions({
    rpID: rp.id,
    challenge,
    timeout: CHALLENGE_TTL_S * 1000,
    userVerification: 'required',
    allowCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: p.transports }))
  }), { kind: 'verify', uid: user.id, sub: verificationSubject(req), exp: nowS() + CHALLENGE_TTL_S })
}

/**
 * Checks the caller's passkey answer to {@link verificationOptions}; a refusal counts toward
 * the sign-in lockout like a wrong password. The caller checks the lockout first and marks the
 * session verified after.
 */
export async function acceptVerification (deps: PasskeyDeps, req: FastifyRequest, response: PasskeyAuthenticationResponse): Promise<void> {
  const user = req.auth!.user
  const rp = await relyingParty(deps, req)
  try {
    const clientData = clientDataOf(response.response.clientDataJSON)
    const ceremony = await takeCeremony(deps, clientData.challenge)
    if (ceremony?.kind !== 'verify' || ceremony.uid !== user.id || ceremony.sub !== verificationSubject(req)) throw fail(PM.challengeExpired)
    const passkey = await findPasskeyByCredentialId(deps.db, response.id)
    if (passkey === undefined || passkey.user_id !== user.id) throw fail(PM.notYours)
    await acceptAssertion(deps, rp, clientData.challenge, passkey, response)
  } catch (err) {
    if (err instanceof ApiError) await countLoginFailure(deps, req, [user.username])
    throw err
  }
}

/** Whether the user can verify with a passkey now: passkeys are on and the user has one. */
export async function canVerifyWithPasskey (deps: Deps<'db' | 'loadOptions'>, userId: number): Promise<boolean> {
  return await passkeysAvailable(deps) && await countPasskeys(deps.db, userId) > 0
}
