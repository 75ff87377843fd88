import type {
  CustomOAuthAuthorizeAnswer,
  CustomOAuthBindingView,
  CustomOAuthDiscoveryResult,
  CustomOAuthProviderCreateBody,
  CustomOAuthProviderUpdateBody,
  CustomOAuthProviderView
} from '@modelgate/contracts'
import { get, post, requestEnvelope } from '../../api/client'

const BASE = '/api/custom-oauth-provider/'

export const listProviders = async (): Promise<CustomOAuthProviderView[]> => await get<CustomOAuthProviderView[]>(BASE)

/** Adds a provider; the answer's message says so in the user's language. */
export async function createProvider (body: CustomOAuthProviderCreateBody): Promise<{ provider: CustomOAuthProviderView, message: string }> {
  const env = await requestEnvelope<CustomOAuthProviderView>('POST', BASE, { body })
  return { provider: env.data as CustomOAuthProviderView, message: env.message }
}

/** Changes a provider (a blank client secret keeps the stored one). */
export async function updateProvider (id: number, body: CustomOAuthProviderUpdateBody): Promise<{ provider: CustomOAuthProviderView, message: string }> {
  const env = await requestEnvelope<CustomOAuthProviderView>('PUT', `${BASE}${id}`, { body })
  return { provider: env.data as CustomOAuthProviderView, message: env.message }
}

export async function deleteProvider (id: number): Promise<string> {
  const env = await requestEnvelope<null>('DELETE', `${BASE}${id}`)
  return env.message
}

/** The issuer's discovery document read by the server (through its outbound guard), as fields to prefill. */
export const discover = async (issuer: string): Promise<CustomOAuthDiscoveryResult> =>
  await post<CustomOAuthDiscoveryResult>(`${BASE}discovery`, { issuer })

/** Where to send the browser to sign in (or, signed in, to bind) through the provider `slug`. */
export const authorizeUrl = async (slug: string, aff: string): Promise<string> =>
  (await get<CustomOAuthAuthorizeAnswer>(`/api/oauth/${encodeURIComponent(slug)}/authorize`, aff === '' ? undefined : { aff })).url

export const listBindings = async (): Promise<CustomOAuthBindingView[]> => await get<CustomOAuthBindingView[]>('/api/user/oauth/bindings')

export async function unbind (providerId: number): Promise<string> {
  const env = await requestEnvelope<null>('DELETE', `/api/user/oauth/bindings/${providerId}`)
  return env.message
}
