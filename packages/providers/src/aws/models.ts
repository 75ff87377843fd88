import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { isRecord, list, parseJson, str } from '../core/json.js'

/** Geographies of Bedrock's cross-region (system-defined) inference profiles, as id prefixes. */
type Geography = 'global' | 'us' | 'eu' | 'jp' | 'apac'

interface BedrockClaude {
  /** The Anthropic model id this entry is known by in the model list (the dated one where there is one). */
  name: string
  /** Other Anthropic ids of the same model (aliases). */
  aliases: readonly string[]
  /** The base Bedrock model id. */
  id: string
  /**
   * The inference profiles Bedrock offers it in; a model with some is served on demand only
   * through one of them (Claude 3.7 and later), one without any is served in-region.
   */
  profiles: readonly Geography[]
}

// Anthropic's table "Claude on Amazon Bedrock" (base model ids and the inference profiles of
// each); a geography left out where the table was not clear falls back to the global profile.
const BEDROCK_CLAUDE: readonly BedrockClaude[] = [
  { name: 'claude-opus-4-6', aliases: [], id: 'anthropic.claude-opus-4-6-v1', profiles: ['us', 'eu', 'jp', 'apac', 'global'] },
  { name: 'claude-sonnet-4-6', aliases: [], id: 'anthropic.claude-sonnet-4-6', profiles: ['us', 'eu', 'jp', 'global'] },
  { name: 'claude-opus-4-5-20251101', aliases: ['claude-opus-4-5'], id: 'anthropic.claude-opus-4-5-20251101-v1:0', profiles: ['us', 'eu', 'global'] },
  { name: 'claude-haiku-4-5-20251001', aliases: ['claude-haiku-4-5'], id: 'anthropic.claude-haiku-4-5-20251001-v1:0', profiles: ['us', 'eu', 'global'] },
  { name: 'claude-sonnet-4-5-20250929', aliases: ['claude-sonnet-4-5'], id: 'anthropic.claude-sonnet-4-5-20250929-v1:0', profiles: ['us', 'eu', 'jp', 'global'] },
  { name: 'claude-opus-4-1-20250805', aliases: ['claude-opus-4-1'], id: 'anthropic.claude-opus-4-1-20250805-v1:0', profiles: ['us'] },
  { name: 'claude-opus-4-20250514', aliases: ['claude-opus-4-0'], id: 'anthropic.claude-opus-4-20250514-v1:0', profiles: ['us'] },
  { name: 'claude-sonnet-4-20250514', aliases: ['claude-sonnet-4-0'], id: 'anthropic.claude-sonnet-4-20250514-v1:0', profiles: ['us', 'eu', 'apac', 'global'] },
  { name: 'claude-3-7-sonnet-20250219', aliases: ['claude-3-7-sonnet-latest'], id: 'anthropic.claude-3-7-sonnet-20250219-v1:0', profiles: ['us', 'eu', 'apac'] },
  { name: 'claude-3-5-haiku-20241022', aliases: ['claude-3-5-haiku-latest'], id: 'anthropic.claude-3-5-haiku-20241022-v1:0', profiles: ['us'] },
  { name: 'claude-3-haiku-20240307', aliases: [], id: 'anthropic.claude-3-haiku-20240307-v1:0', profiles: [] }
]

const BY_NAME: ReadonlyMap<string, BedrockClaude> = new Map(BEDROCK_CLAUDE.flatMap((model) => [model.name, ...model.aliases].map((name) => [name, model] as const)))
const BY_ID: ReadonlyMap<string, BedrockClaude> = new Map(BEDROCK_CLAUDE.map((model) => [model.id, model]))

/** The geographies whose profiles a request from `region` may use, the nearest first. */
function geographiesOf (region: string): Geography[] {
  if (region.startsWith('us-gov-')) return []
  if (region.startsWith('us-')) return ['us']
  if (region.startsWith('eu-')) return ['eu']
  if (region === 'ap-northeast-1' || region === 'ap-northeast-3') return ['jp', 'apac']
  if (region.startsWith('ap-')) return ['apac']
  return []
}

/**
 * The Bedrock model id for `model` called from `region`. Anthropic's ids (`claude-sonnet-4-5`,
 * `claude-sonnet-4-5-20250929`) become Bedrock's (`anthropic.claude-sonnet-4-5-20250929-v1:0`),
 * prefixed with the inference profile of the region's geography (`us.`, `eu.`, `jp.`, `apac.`)
 * when the model is served through profiles, else with `global.` when it has a global profile and
 * none of the region's geography. Anything else (a Bedrock id, a profile id such as
 * `global.anthropic.…`, an ARN, an unknown name) is used unchanged: map a model to one of those in
 * the channel's model mapping to choose another profile.
 */
export function bedrockModelId (model: string, region: string): string {
  const known = BY_NAME.get(model)
  if (known === undefined) return model
  if (known.profiles.length === 0) return known.id
  const geography = geographiesOf(region).find((geo) => known.profiles.includes(geo)) ?? (known.profiles.includes('global') ? 'global' : undefined)
  return geography === undefined ? known.id : `${geography}.${known.id}`
}

/**
 * The models of Bedrock's foundation model list (`{modelSummaries: [{modelId, inferenceTypesSupported, ...}]}`)
 * that can be called on demand or through an inference profile: under their Anthropic id when
 * this adaptor knows the model (so each request gets the region's profile), else under their
 * Bedrock id. Provisioned-throughput-only variants (`…:200k`) are left out.
 */
export function parseBedrockModels (body: string): string[] {
  const json = parseJson(body)
  if (!isRecord(json) || !Array.isArray(json.modelSummaries)) {
    throw new ProviderError(PROVIDER_ERROR_CODES.badUpstreamBody, 'the upstream did not answer with a Bedrock model list')
  }
  const ids: string[] = []
  for (const summary of list(json.modelSummaries)) {
    if (!isRecord(summary)) continue
    const id = str(summary.modelId)
    if (id === undefined || id === '') continue
    const types = summary.inferenceTypesSupported
    if (Array.isArray(types) && !types.includes('ON_DEMAND') && !types.includes('INFERENCE_PROFILE')) continue
    const name = BY_ID.get(id)?.name ?? id
    if (!ids.includes(name)) ids.push(name)
  }
  return ids
}
