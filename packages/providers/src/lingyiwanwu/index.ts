import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'

/** Type 31: 01.AI (Lingyiwanwu, Yi models). */
export const lingyiwanwu = openAICompatible({
  type: CHANNEL_TYPE.lingyiwanwu,
  name: '01.AI',
  defaultBaseUrl: 'https://api.lingyiwanwu.com',
  defaultModels: ['yi-lightning', 'yi-large', 'yi-large-turbo', 'yi-large-fc', 'yi-medium', 'yi-vision', 'yi-spark']
})
