import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'

/** Type 19: 360 AI (360 Zhinao), OpenAI-compatible. */
export const ai360 = openAICompatible({
  type: CHANNEL_TYPE.ai360,
  name: '360',
  defaultBaseUrl: 'https://ai.360.cn',
  defaultModels: ['360gpt2-pro', '360gpt-pro', '360gpt-turbo', '360gpt2-o1', '360GPT_S2_V9', 'embedding-bert-512-v1', 'embedding_s1_v1', 'semantic_similarity_s1_v1']
})
