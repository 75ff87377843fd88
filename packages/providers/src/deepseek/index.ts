import { openAICompatible } from '../openai-compatible/index.js'

/** Type 43: DeepSeek. Reports cached prompt tokens as `prompt_cache_hit_tokens` too. */
export const deepSeek = openAICompatible({
  type: 43,
  name: 'DeepSeek',
  defaultBaseUrl: 'https://api.deepseek.com',
  defaultModels: ['deepseek-chat', 'deepseek-reasoner']
})
