import type { PasskeyAuthenticationResponse, PasskeyList, PasskeyRegistrationResponse, PasskeyView, UserView, VerifyStatus } from '@modelgate/contracts'
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser'
import { del, get, post, put, requestEnvelope } from '../../api/client'

/** The caller's passkeys, and whether passkeys are on for the site. */
export const listPasskeys = async (): Promise<PasskeyList> => await get<PasskeyList>('/api/user/passkey')

/** Options for `navigator.credentials.create()`. Needs a fresh secure verification (wrap it in useVerification().withVerification). */
export const registrationOptions = async (): Promise<PublicKeyCredentialCreationOptionsJSON> =>
  (await post<{ options: PublicKeyCredentialCreationOptionsJSON }>('/api/user/passkey/register/begin')).options

export const finishRegistration = async (response: PasskeyRegistrationResponse, name: string): Promise<PasskeyView> =>
  await post<PasskeyView>('/api/user/passkey/register/finish', { name, response })

export const renamePasskey = async (id: number, name: string): Promise<void> => { await put(`/api/user/passkey/${id}`, { name }) }

/** Needs a fresh secure verification (wrap it in useVerification().withVerification). */
export const deletePasskey = async (id: number): Promise<void> => { await del(`/api/user/passkey/${id}`) }

/** A passwordless sign-in's options and the flow id its answer goes back with. */
export const loginOptions = async (): Promise<{ options: PublicKeyCredentialRequestOptionsJSON, flow_id: string }> =>
  await post<{ options: PublicKeyCredentialRequestOptionsJSON, flow_id: string }>('/api/user/passkey/login/begin')

/** The user the passkey signs in, and the server's message (it tells whether the default password is in use). */
export async function finishLogin (flowId: string, response: PasskeyAuthenticationResponse): Promise<{ user: UserView, message: string }> {
  const env = await requestEnvelope<UserView>('POST', '/api/user/passkey/login/finish', { body: { flow_id: flowId, response } })
  return { user: env.data as UserView, message: env.message }
}

export const verificationOptions = async (): Promise<PublicKeyCredentialRequestOptionsJSON> =>
  (await post<{ options: PublicKeyCredentialRequestOptionsJSON }>('/api/user/passkey/verify/begin')).options

export const finishVerification = async (response: PasskeyAuthenticationResponse): Promise<VerifyStatus> =>
  await post<VerifyStatus>('/api/user/passkey/verify/finish', { response })

/** An admin's view of a user's passkeys. */
export const userPasskeys = async (userId: number): Promise<PasskeyList> => await get<PasskeyList>(`/api/user/${userId}/passkey`)

/** Removes every passkey of a user of a lower role and ends the user's sessions. */
export const resetUserPasskeys = async (userId: number): Promise<void> => { await del(`/api/user/${userId}/passkey`) }
