/** Codes of the errors this package throws (prefix `PROV_ERR_`). */
export const PROVIDER_ERROR_CODES = {
  /** The channel has no base URL and its type has no default. */
  noBaseUrl: 'PROV_ERR_NO_BASE_URL',
  /** The channel's base URL is not an absolute http(s) URL. */
  badBaseUrl: 'PROV_ERR_BAD_BASE_URL',
  /** The relay request carries neither a JSON body nor a raw body. */
  noBody: 'PROV_ERR_NO_BODY',
  /** The adaptor does not serve this endpoint or client format (check `supports` first). */
  unsupported: 'PROV_ERR_UNSUPPORTED',
  /** The upstream's answer does not have the expected shape (for example a model list). */
  badUpstreamBody: 'PROV_ERR_BAD_UPSTREAM_BODY',
  /** The channel's credentials could not be made into an upstream credential (see CredentialError). */
  credentials: 'PROV_ERR_CREDENTIALS'
} as const

type ProviderErrorCode = typeof PROVIDER_ERROR_CODES[keyof typeof PROVIDER_ERROR_CODES]

/**
 * A request the adaptor cannot build or an answer it cannot read. The message never contains
 * channel keys; it may name the channel's base URL, so show it to admins only.
 */
export class ProviderError extends Error {
  readonly code: ProviderErrorCode

  constructor (code: ProviderErrorCode, message: string) {
    super(message)
    this.name = 'ProviderError'
    this.code = code
  }
}
