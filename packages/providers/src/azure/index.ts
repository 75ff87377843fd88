import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'
import { OPENAI_MODELS } from '../openai/index.js'
import { azureHeaders, azureUrl } from './api.js'

/**
 * Type 3: Azure OpenAI. The base URL is the resource endpoint
 * (`https://<resource>.openai.azure.com`, no default); `other` is the API version.
 */
export const azureOpenAI = openAICompatible({
  type: CHANNEL_TYPE.azure,
  name: 'Azure OpenAI',
  defaultBaseUrl: '',
  defaultModels: OPENAI_MODELS,
  urlFor: azureUrl,
  headersFor: azureHeaders
})
