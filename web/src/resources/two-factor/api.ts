import type { SecondStepRequired, TwoFactorSetup, TwoFactorStats, TwoFactorStatus, UserView, VerifyMethod, VerifyStatus } from '@modelgate/contracts'
import { del, get, post, requestEnvelope } from '../../api/client'

export const twoFactorStatus = async (): Promise<TwoFactorStatus> => await get<TwoFactorStatus>('/api/user/2fa/status')

/** A new pending secret and ten backup codes (shown once); on only after {@link enableTwoFactor}. */
export const setupTwoFactor = async (): Promise<TwoFactorSetup> => await post<TwoFactorSetup>('/api/user/2fa/setup')

export const enableTwoFactor = async (code: string): Promise<void> => { await post('/api/user/2fa/enable', { code }) }

/** Needs a fresh secure verification (wrap it in useVerification().withVerification). */
export const disableTwoFactor = async (code: string): Promise<void> => { await post('/api/user/2fa/disable', { code }) }

export const regenerateBackupCodes = async (code: string): Promise<string[]> =>
  (await post<{ backup_codes: string[] }>('/api/user/2fa/backup_codes', { code })).backup_codes

/** The second step of a sign-in: a TOTP or backup code for the first step's flow token. */
export async function loginSecondStep (code: string, flowToken: string): Promise<{ user: UserView, message: string }> {
  const env = await requestEnvelope<UserView>('POST', '/api/user/login/2fa', { body: { code, flow_token: flowToken } })
  return { user: env.data as UserView, message: env.message }
}

/** True when a sign-in answer asks for the second step instead of carrying the user. */
export function isSecondStep (data: unknown): data is SecondStepRequired {
  return typeof data === 'object' && data !== null && (data as { require_2fa?: unknown }).require_2fa === true
}

export const verifyStatus = async (): Promise<VerifyStatus> => await get<VerifyStatus>('/api/verify/status')

export const verifySession = async (method: VerifyMethod, value: string): Promise<VerifyStatus> => await post<VerifyStatus>('/api/verify', { method, value })

export const twoFactorStats = async (): Promise<TwoFactorStats> => await get<TwoFactorStats>('/api/user/2fa/stats')

export const resetUserTwoFactor = async (id: number): Promise<void> => { await del(`/api/user/${id}/2fa`) }
