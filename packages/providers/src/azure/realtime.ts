import type { ChannelConfig } from '../core/adaptor.js'
import { AZURE_DEFAULT_API_VERSION } from './api.js'

/** API version asked for when the channel's is older than Azure's realtime API (the default included). */
const AZURE_REALTIME_API_VERSION = '2025-04-01-preview'

/** The first API version with the realtime API. */
const REALTIME_MIN_API_VERSION = '2024-10-01-preview'

/**
 * `wss://<resource>/openai/realtime?api-version=<version>&deployment=<deployment>` from the
 * channel's http(s) base URL. The deployment is the model without dots, as for every other Azure
 * path (azureUrl); `other` is the API version, raised to one that has the realtime API.
 */
export function azureRealtimeUrl (base: string, channel: ChannelConfig, model: string): string {
  const version = channel.other.trim() || AZURE_DEFAULT_API_VERSION
  // Dated versions compare as strings.
  const usable = /^\d{4}-/.test(version) && version < REALTIME_MIN_API_VERSION ? AZURE_REALTIME_API_VERSION : version
  const deployment = encodeURIComponent(model.replace(/\./g, ''))
  return `${base.replace(/^http/i, 'ws')}/openai/realtime?api-version=${encodeURIComponent(usable)}&deployment=${deployment}`
}
