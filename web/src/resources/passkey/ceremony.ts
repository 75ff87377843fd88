import type { PasskeyAuthenticationResponse, PasskeyRegistrationResponse, PasskeyView, UserView, VerifyStatus } from '@modelgate/contracts'
import { browserSupportsWebAuthn, startAuthentication, startRegistration, WebAuthnError } from '@simplewebauthn/browser'
import { ApiError } from '../../api/client'
import i18n from '../../i18n'
import { finishLogin, finishRegistration, finishVerification, loginOptions, registrationOptions, verificationOptions } from './api'

/** Whether this browser can use passkeys at all (WebAuthn in a secure context: HTTPS or localhost). */
export function passkeysSupported (): boolean {
  return browserSupportsWebAuthn() && window.isSecureContext
}

/** What went wrong in the browser's part of a ceremony, in the user's words; server refusals pass as they came. */
function described (err: unknown): Error {
  if (err instanceof ApiError) return err
  const code = err instanceof WebAuthnError ? err.code : undefined
  const name = err instanceof Error ? err.name : ''
  if (code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return new Error(i18n.t('passkey.errors.alreadyRegistered'))
  if (code === 'ERROR_INVALID_DOMAIN' || code === 'ERROR_INVALID_RP_ID' || name === 'SecurityError') return new Error(i18n.t('passkey.errors.domain'))
  if (code === 'ERROR_CEREMONY_ABORTED' || name === 'NotAllowedError' || name === 'AbortError') return new Error(i18n.t('passkey.errors.cancelled'))
  if (!passkeysSupported()) return new Error(i18n.t('passkey.errors.unsupported'))
  return new Error(i18n.t('passkey.errors.failed', { message: err instanceof Error ? err.message : String(err) }))
}

/**
 * Adds a passkey: the server's options, the browser's dialog, the server's check. Asking for the
 * options may need a fresh verification first: `guard` is useVerification().withVerification.
 */
export async function addPasskey (name: string, guard: <T>(action: () => Promise<T>) => Promise<T>): Promise<PasskeyView> {
  const optionsJSON = await guard(registrationOptions)
  let response
  try {
    response = await startRegistration({ optionsJSON })
  } catch (err) {
    throw described(err)
  }
  return await finishRegistration(response as PasskeyRegistrationResponse, name)
}

/** A passwordless sign-in: the browser offers the passkeys it holds for this site. */
export async function signInWithPasskey (): Promise<{ user: UserView, message: string }> {
  const { options, flow_id: flowId } = await loginOptions()
  let response
  try {
    response = await startAuthentication({ optionsJSON: options })
  } catch (err) {
    throw described(err)
  }
  return await finishLogin(flowId, response as PasskeyAuthenticationResponse)
}

/** A secure verification with one of the user's passkeys (the session may then do sensitive things for five minutes). */
export async function verifyWithPasskey (): Promise<VerifyStatus> {
  const options = await verificationOptions()
  let response
  try {
    response = await startAuthentication({ optionsJSON: options })
  } catch (err) {
    throw described(err)
  }
  return await finishVerification(response as PasskeyAuthenticationResponse)
}
