import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'
import { customUrl } from './api.js'

/** Type 8: any OpenAI-compatible URL, given in full by the admin (may contain `{model}`). */
export const custom = openAICompatible({
  type: CHANNEL_TYPE.custom,
  name: 'custom',
  defaultBaseUrl: '',
  defaultModels: [],
  urlFor: customUrl
})
