import { CHANNEL_TYPE, type ChannelType } from '@modelgate/contracts'
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
  [CHANNEL_TYPE.openai]: 'OpenAI',
  [CHANNEL_TYPE.midjourney]: 'Midjourney Proxy',
  [CHANNEL_TYPE.azure]: 'Azure OpenAI',
  [CHANNEL_TYPE.ollama]: 'Ollama',
  [CHANNEL_TYPE.midjourneyPlus]: 'Midjourney Proxy Plus',
  [CHANNEL_TYPE.custom]: 'custom',
  [CHANNEL_TYPE.palm2]: 'PaLM2',
  [CHANNEL_TYPE.claude]: 'Claude',
  [CHANNEL_TYPE.baidu]: 'Baidu',
  [CHANNEL_TYPE.chatglm]: 'ChatGLM',
  [CHANNEL_TYPE.alibaba]: 'Alibaba',
  [CHANNEL_TYPE.spark]: 'iFlytek (Spark)',
  [CHANNEL_TYPE.ai360]: '360',
  [CHANNEL_TYPE.aiProxyLibrary]: 'AI Proxy (knowledge base)',
  [CHANNEL_TYPE.fastgpt]: 'FastGPT (private deployment)',
  [CHANNEL_TYPE.tencent]: 'Tencent',
  [CHANNEL_TYPE.gemini]: 'Gemini',
  [CHANNEL_TYPE.moonshot]: 'Moonshot',
  [CHANNEL_TYPE.glm4v]: 'GLM-4V',
  [CHANNEL_TYPE.lingyiwanwu]: '01.AI',
  [CHANNEL_TYPE.aws]: 'AWS Claude',
  [CHANNEL_TYPE.cohere]: 'Cohere',
  [CHANNEL_TYPE.minimax]: 'MiniMax',
  [CHANNEL_TYPE.suno]: 'Suno',
  [CHANNEL_TYPE.dify]: 'Dify',
  [CHANNEL_TYPE.jina]: 'Jina',
  [CHANNEL_TYPE.cloudflare]: 'Cloudflare',
  [CHANNEL_TYPE.siliconcloud]: 'SiliconCloud',
  [CHANNEL_TYPE.vertex]: 'Vertex AI',
  [CHANNEL_TYPE.mistral]: 'Mistral',
  [CHANNEL_TYPE.deepseek]: 'DeepSeek',
  [CHANNEL_TYPE.claudeCode]: 'Claude Code',
  [CHANNEL_TYPE.codex]: 'Codex'
} satisfies Record<ChannelType, string>)

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

/** The task types' models: Midjourney's actions (Midjourney Proxy and its Plus) and Suno's kinds. */
const TASK_TYPE_MODELS: Readonly<Record<number, readonly string[]>> = {
  [CHANNEL_TYPE.midjourney]: Object.values(MJ_ACTION_MODELS),
  [CHANNEL_TYPE.midjourneyPlus]: Object.values(MJ_ACTION_MODELS),
  [CHANNEL_TYPE.suno]: Object.values(SUNO_KINDS).map((k) => k.model)
}

/** Default models of every type that has an adaptor or a task protocol (`GET /api/models`); fresh arrays. */
export function defaultModelsByType (): Record<number, string[]> {
  const models: Record<number, string[]> = {}
  for (const [type, adaptor] of ADAPTORS) models[type] = [...adaptor.defaultModels]
  for (const [type, list] of Object.entries(TASK_TYPE_MODELS)) models[Number(type)] = [...list]
  return models
}
