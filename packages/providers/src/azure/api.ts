import type { ChannelConfig } from '../core/adaptor.js'
import type { UrlContext, UrlTarget } from '../openai-compatible/index.js'

/** API version used when the channel's `other` field is empty. */
export const AZURE_DEFAULT_API_VERSION = '2023-06-01-preview'

/** The responses API exists from this version on. */
const RESPONSES_MIN_API_VERSION = '2025-03-01-preview'

const DEPLOYMENT_PATHS: Readonly<Record<Exclude<UrlTarget, 'models' | 'responses'>, string>> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  images_generations: '/images/generations',
  images_edits: '/images/edits',
  audio_speech: '/audio/speech',
  audio_transcriptions: '/audio/transcriptions',
  audio_translations: '/audio/translations',
  moderations: '/moderations',
  rerank: '/rerank'
}

/**
 * `${base}/openai/deployments/<deployment>/<path>?api-version=<other or default>`. The
 * deployment is the model without dots (Azure deployment names cannot hold them: gpt-3.5-turbo
 * is deployed as gpt-35-turbo). The responses API and the model list are not per deployment.
 */
export function azureUrl ({ base, channel, target, model }: UrlContext): string {
  const version = channel.other.trim() || AZURE_DEFAULT_API_VERSION
  if (target === 'models') return `${base}/openai/models?api-version=${encodeURIComponent(version)}`
  if (target === 'responses') {
    // Dated versions compare as strings; older ones (the default included) have no responses API.
    const usable = /^\d{4}-/.test(version) && version < RESPONSES_MIN_API_VERSION ? RESPONSES_MIN_API_VERSION : version
    return `${base}/openai/responses?api-version=${encodeURIComponent(usable)}`
  }
  const deployment = encodeURIComponent(model.replace(/\./g, ''))
  return `${base}/openai/deployments/${deployment}${DEPLOYMENT_PATHS[target]}?api-version=${encodeURIComponent(version)}`
}

/** Azure authenticates with `api-key`, not a bearer token. */
export function azureHeaders (channel: ChannelConfig): Record<string, string> {
  return { 'api-key': channel.key.trim() }
}
