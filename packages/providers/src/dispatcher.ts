import type { Dispatcher } from 'undici'
import { defaultOutbound } from './outbound.js'

/**
 * The dispatcher of the default guard (metadata refused, private allowed) for `proxyUrl`: see
 * {@link Outbound.dispatcher}. Services use their own guard, made from their config.
 */
export function upstreamDispatcher (proxyUrl: string | undefined): Dispatcher {
  return defaultOutbound.dispatcher(proxyUrl)
}
