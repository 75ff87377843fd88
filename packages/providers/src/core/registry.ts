import type { ProviderAdaptor } from './adaptor.js'
import { ai360 } from '../ai360/index.js'
import { alibaba } from '../alibaba/index.js'
import { aiProxyLibrary } from '../aiproxy-library/index.js'
import { awsClaude } from '../aws/index.js'
import { azureOpenAI } from '../azure/index.js'
import { baidu } from '../baidu/index.js'
import { chatGLM } from '../chatglm/index.js'
import { claude } from '../claude/index.js'
import { claudeCode } from '../claude-code/index.js'
import { cloudflare } from '../cloudflare/index.js'
import { codex } from '../codex/index.js'
import { cohere } from '../cohere/index.js'
import { custom } from '../custom/index.js'
import { deepSeek } from '../deepseek/index.js'
import { dify } from '../dify/index.js'
import { fastGPT } from '../fastgpt/index.js'
import { gemini } from '../gemini/index.js'
import { glm4V } from '../glm-4v/index.js'
import { jina } from '../jina/index.js'
import { lingyiwanwu } from '../lingyiwanwu/index.js'
import { miniMax } from '../minimax/index.js'
import { mistral } from '../mistral/index.js'
import { moonshot } from '../moonshot/index.js'
import { ollama } from '../ollama/index.js'
import { openAI } from '../openai/index.js'
import { palm2 } from '../palm2/index.js'
import { siliconCloud } from '../siliconcloud/index.js'
import { spark } from '../spark/index.js'
import { MJ_ACTION_MODELS } from '../tasks/midjourney.js'
import { SUNO_KINDS } from '../tasks/suno.js'
import { tencent } from '../tencent/index.js'
import { vertexAI } from '../vertex/index.js'

/** Every channel type, by number (docs/domain.md, "Channel types"); types without an adaptor included. */
export const CHANNEL_TYPE_NAMES: Readonly<Record<number, string>> = Object.freeze({
  1: 'OpenAI',
  2: 'Midjourney Proxy',
  3: 'Azure OpenAI',
  4: 'Ollama',
  5: 'Midjourney Proxy Plus',
  8: 'custom',
  11: 'PaLM2',
  14: 'Claude',
  15: 'Baidu',
  16: 'ChatGLM',
  17: 'Alibaba',
  18: 'iFlytek (Spark)',
  19: '360',
  21: 'AI Proxy (knowledge base)',
  22: 'FastGPT (private deployment)',
  23: 'Tencent',
  24: 'Gemini',
  25: 'Moonshot',
  26: 'GLM-4V',
  31: '01.AI',
  33: 'AWS Claude',
  34: 'Cohere',
  35: 'MiniMax',
  36: 'Suno',
  37: 'Dify',
  38: 'Jina',
  39: 'Cloudflare',
  40: 'SiliconCloud',
  41: 'Vertex AI',
  42: 'Mistral',
  43: 'DeepSeek',
  44: 'Claude Code',
  45: 'Codex'
})

const ADAPTORS: ReadonlyMap<number, ProviderAdaptor> = new Map(
  [openAI, azureOpenAI, ollama, custom, ai360, moonshot, lingyiwanwu, siliconCloud, mistral, deepSeek, claude, gemini, baidu, palm2, chatGLM, glm4V, aiProxyLibrary, fastGPT, dify, claudeCode, codex, alibaba, spark, tencent, cohere, miniMax, jina, cloudflare, awsClaude, vertexAI]
    .map((adaptor) => [adaptor.type, adaptor])
)

/** The adaptor of a channel type; undefined for unknown types and types not implemented yet. */
export function adaptorFor (type: number): ProviderAdaptor | undefined {
  return ADAPTORS.get(type)
}

/** Channel types that have an adaptor, ascending. */
export function registeredTypes (): number[] {
  return [...ADAPTORS.keys()].sort((a, b) => a - b)
}

/** The task types' models: Midjourney's actions (types 2 and 5) and Suno's kinds (type 36). */
const TASK_TYPE_MODELS: Readonly<Record<number, readonly string[]>> = {
  2: Object.values(MJ_ACTION_MODELS),
  5: Object.values(MJ_ACTION_MODELS),
  36: Object.values(SUNO_KINDS).map((k) => k.model)
}

/** Default models of every type that has an adaptor or a task protocol (`GET /api/models`); fresh arrays. */
export function defaultModelsByType (): Record<number, string[]> {
  const models: Record<number, string[]> = {}
  for (const [type, adaptor] of ADAPTORS) models[type] = [...adaptor.defaultModels]
  for (const [type, list] of Object.entries(TASK_TYPE_MODELS)) models[Number(type)] = [...list]
  return models
}
