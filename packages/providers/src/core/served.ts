import type { ClientFormat, Endpoint, RelayRequest } from './adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from './errors.js'

/** An adaptor's `supports`, and the checks of its requests against it. */
interface Served<E extends Endpoint> {
  supports: (endpoint: Endpoint, format: ClientFormat) => boolean
  /** `req`, if the adaptor serves it; else a ProviderError (unsupported). */
  checked: <R extends Pick<RelayRequest, 'endpoint' | 'format'>>(req: R) => R
  /** The endpoint of `req`, if the adaptor serves it (see checked). */
  endpointOf: (req: Pick<RelayRequest, 'endpoint' | 'format'>) => E
}

/**
 * For an adaptor named `name` that serves a fixed set of endpoints to each client format
 * (`{openai: ['chat', 'embeddings']}`): whether it serves a pair, and a check that throws
 * `<name> does not serve <endpoint> to <format> clients` for one it does not.
 */
export function servesOnly<E extends Endpoint> (name: string, served: Partial<Record<ClientFormat, readonly E[]>>): Served<E> {
  const supports = (endpoint: Endpoint, format: ClientFormat): boolean => (served[format] as readonly Endpoint[] | undefined)?.includes(endpoint) ?? false
  const checked = <R extends Pick<RelayRequest, 'endpoint' | 'format'>>(req: R): R => {
    if (!supports(req.endpoint, req.format)) {
      throw new ProviderError(PROVIDER_ERROR_CODES.unsupported, `${name} does not serve ${req.endpoint} to ${req.format} clients`)
    }
    return req
  }
  return { supports, checked, endpointOf: (req) => checked(req).endpoint as E }
}
