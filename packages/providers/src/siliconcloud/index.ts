import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'

/** Type 40: SiliconCloud (SiliconFlow): chat, embeddings, rerank and images. */
export const siliconCloud = openAICompatible({
  type: CHANNEL_TYPE.siliconcloud,
  name: 'SiliconCloud',
  defaultBaseUrl: 'https://api.siliconflow.cn',
  defaultModels: [
    'deepseek-ai/DeepSeek-V3', 'deepseek-ai/DeepSeek-R1', 'Qwen/Qwen3-32B', 'Qwen/Qwen2.5-72B-Instruct', 'Qwen/Qwen2.5-7B-Instruct',
    'THUDM/GLM-4-9B-0414', 'BAAI/bge-m3', 'BAAI/bge-large-zh-v1.5', 'BAAI/bge-reranker-v2-m3', 'Kwai-Kolors/Kolors'
  ]
})
