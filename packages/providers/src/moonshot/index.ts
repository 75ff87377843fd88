import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'

/** Type 25: Moonshot (Kimi). Its streams carry usage inside the last choice; the stream reader knows. */
export const moonshot = openAICompatible({
  type: CHANNEL_TYPE.moonshot,
  name: 'Moonshot',
  defaultBaseUrl: 'https://api.moonshot.cn',
  defaultModels: ['kimi-k2-0711-preview', 'kimi-latest', 'moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k', 'moonshot-v1-8k-vision-preview']
})
