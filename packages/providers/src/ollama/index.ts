import { CHANNEL_TYPE } from '@modelgate/contracts'
import { openAICompatible } from '../openai-compatible/index.js'

/**
 * Type 4: Ollama through its OpenAI-compatible `/v1` API. No key needed; a key, when set, is
 * sent as a bearer token (for Ollama behind an authenticating proxy).
 */
export const ollama = openAICompatible({
  type: CHANNEL_TYPE.ollama,
  name: 'Ollama',
  defaultBaseUrl: 'http://localhost:11434',
  defaultModels: [
    'llama3.1', 'llama3.2', 'llama3.3', 'qwen2.5', 'qwen3', 'deepseek-r1', 'mistral', 'gemma3', 'phi4',
    'nomic-embed-text', 'mxbai-embed-large'
  ]
})
