import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'

/** Type 43: DeepSeek. Reports cached prompt tokens as `prompt_cache_hit_tokens` too. */
export const deepSeek = openAICompatible({
  type: CHANNEL_TYPE.deepseek,
  name: 'DeepSeek',
  defaultBaseUrl: 'https://api.deepseek.com',
  defaultModels: ['deepseek-chat', 'deepseek-reasoner']
})
