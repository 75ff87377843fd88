import type { OptionKey } from '@modelgate/contracts'
import { get, post, put, requestEnvelope } from '../../api/client'

/** One option as GET /api/option/ gives it; a credential answers '' with whether it is set. */
export interface OptionItem {
  key: string
  value: string
  secret?: boolean
  is_set?: boolean
}

export const fetchOptions = async (): Promise<OptionItem[]> => await get<OptionItem[]>('/api/option/')

/** Stores one option; the answer carries the value as the server normalised it ('' for credentials). */
export const saveOption = async (key: OptionKey, value: string): Promise<{ key: string, value: string }> =>
  await put<{ key: string, value: string }>('/api/option/', { key, value })

/** Removes a stored credential (a blank value would keep it: credentials are write-only). */
export const clearOption = async (key: OptionKey): Promise<void> => { await put<{ key: string, value: string }>('/api/option/', { key, value: '', clear: true }) }

/** Restores the default model, completion, cache and audio ratios and per-call prices. */
export const resetModelRatios = async (): Promise<void> => { await post<null>('/api/option/rest_model_ratio') }

/** Deletes every log created before `timestamp` (unix seconds): the count and the server's message. */
export async function clearLogsBefore (timestamp: number): Promise<{ count: number, message: string }> {
  const env = await requestEnvelope<number>('DELETE', '/api/log/', { query: { target_timestamp: timestamp } })
  return { count: env.data ?? 0, message: env.message }
}
