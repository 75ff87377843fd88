import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'
import { OPENAI_BASE_URL, openAIHeaders } from './api.js'

/** OpenAI models offered by default; Azure offers the same names. */
export const OPENAI_MODELS: readonly string[] = [
  'gpt-4o', 'gpt-4o-mini', 'gpt-4o-2024-11-20', 'chatgpt-4o-latest',
  'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano',
  'o1', 'o3', 'o3-mini', 'o4-mini',
  'gpt-4-turbo', 'gpt-3.5-turbo', 'gpt-3.5-turbo-instruct',
  'gpt-4o-audio-preview', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe', 'gpt-4o-mini-tts',
  'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002',
  'dall-e-3', 'dall-e-2', 'gpt-image-1',
  'whisper-1', 'tts-1', 'tts-1-hd',
  'omni-moderation-latest', 'text-moderation-latest'
]

/** Type 1: api.openai.com, or any base URL speaking its protocol. */
export const openAI = openAICompatible({
  type: CHANNEL_TYPE.openai,
  name: 'OpenAI',
  defaultBaseUrl: OPENAI_BASE_URL,
  defaultModels: OPENAI_MODELS,
  headersFor: openAIHeaders
})
