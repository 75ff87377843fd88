import type { SecondStepRequired, UserView } from '@modelgate/contracts'
import { get, post, requestEnvelope } from '../../api/client'
import { isSecondStep } from '../two-factor/api'

/** localStorage key of the invite code a `/register?aff=` link carried. */
export const AFF_KEY = 'aff'

export function storedAff (): string {
  return localStorage.getItem(AFF_KEY) ?? ''
}

/** The user an answer signs in, and the server's message (it tells whether the default password is in use). */
export interface SignInAnswer { user: UserView, message: string }

/** A right password: the user, or, for an account with 2FA, the flow token of the second step (LoginSecondStep). */
export async function login (username: string, password: string, turnstile: string): Promise<SignInAnswer | { flowToken: string }> {
  const env = await requestEnvelope<UserView | SecondStepRequired>('POST', '/api/user/login', { body: { username, password }, query: { turnstile } })
  if (isSecondStep(env.data)) return { flowToken: env.data.flow_token }
  return { user: env.data as UserView, message: env.message }
}

export interface RegisterBody {
  username: string
  password: string
  password2: string
  email?: string
  verification_code?: string
  aff_code?: string
}

export async function register (body: RegisterBody, turnstile: string): Promise<void> {
  await post<null>('/api/user/register', body, { turnstile })
}

/** Mails a verification code to `email` (for registration). */
export async function sendVerificationCode (email: string, turnstile: string): Promise<void> {
  await get<null>('/api/verification', { email, turnstile })
}

/** Mails a password-reset link to `email`. */
export async function sendResetMail (email: string, turnstile: string): Promise<void> {
  await get<null>('/api/reset_password', { email, turnstile })
}

/** Spends the link's token; answers the new password. */
export async function confirmReset (email: string, token: string): Promise<string> {
  return await post<string>('/api/user/reset', { email, token })
}

/** A fresh single-use OAuth state (the server also ties it to this browser with a cookie). */
export async function oauthState (): Promise<string> {
  return await get<string>('/api/oauth/state', { aff: storedAff() })
}

/** `github`, `linuxdo`, or the slug of a provider the super admin added (its callback is /api/oauth/<slug> too). */
export type CodeProvider = string

/**
 * The end of a GitHub or LinuxDO sign-in; `bound` when it bound the account of the signed-in user.
 * An account with 2FA answers the flow token of the second step instead of the user.
 */
export async function finishOAuth (provider: CodeProvider, code: string, state: string, iss?: string): Promise<{ user: UserView | SecondStepRequired, bound: boolean }> {
  // `iss` (RFC 9207): the issuer that answered, which the server compares with the provider's.
  const env = await requestEnvelope<UserView | SecondStepRequired>('GET', `/api/oauth/${encodeURIComponent(provider)}`, { query: { code, state, iss } })
  return { user: env.data as UserView | SecondStepRequired, bound: env.message === 'bind' }
}

export async function wechatLogin (code: string): Promise<UserView | SecondStepRequired> {
  return await get<UserView | SecondStepRequired>('/api/oauth/wechat', { code, aff: storedAff() })
}

/** The fields the Telegram login widget hands over, signed by Telegram. */
export type TelegramAuth = Record<string, string | number | undefined>

export async function telegramLogin (fields: TelegramAuth, lang: string): Promise<UserView | SecondStepRequired> {
  const query: Record<string, string> = {}
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) query[k] = String(v)
  const aff = storedAff()
  if (aff !== '') query['aff'] = aff
  query['lang'] = lang
  return await get<UserView | SecondStepRequired>('/api/oauth/telegram/login', query)
}

/** Where the browser goes to sign in at GitHub. */
export function githubAuthorizeUrl (clientId: string, state: string): string {
  return `https://github.com/login/oauth/authorize?${new URLSearchParams({ client_id: clientId, state, scope: 'user:email' }).toString()}`
}

/**
 * Where the browser goes to sign in at LinuxDO Connect. The server repeats the redirect_uri when
 * it exchanges the code, and builds it from ServerAddress the same way.
 */
export function linuxdoAuthorizeUrl (clientId: string, state: string, serverAddress: string): string {
  const q = new URLSearchParams({ response_type: 'code', client_id: clientId, state })
  const base = serverAddress.trim().replace(/\/+$/, '')
  if (base !== '') q.set('redirect_uri', `${base}/oauth/linuxdo`)
  return `https://connect.linux.do/oauth2/authorize?${q.toString()}`
}
