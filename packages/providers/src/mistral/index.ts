import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'

/**
 * Type 42: Mistral. It rejects unknown fields (422 `extra_forbidden`), `stream_options` among
 * them, and always ends a stream with usage, so `stream_options` is removed instead of merged.
 */
export const mistral = openAICompatible({
  type: CHANNEL_TYPE.mistral,
  name: 'Mistral',
  defaultBaseUrl: 'https://api.mistral.ai',
  defaultModels: [
    'mistral-large-latest', 'mistral-medium-latest', 'mistral-small-latest', 'magistral-medium-latest',
    'codestral-latest', 'pixtral-large-latest', 'ministral-8b-latest', 'open-mistral-nemo',
    'mistral-embed', 'mistral-moderation-latest'
  ],
  streamUsage: 'strip'
})
