import type { ChannelConfig } from '../core/adaptor.js'
import { malformedKey } from '../net/credentials.js'
import { geminiModelName } from '../gemini/index.js'
import { isRecord, parseJson, str } from '../core/json.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'

/** The global endpoint's host, the nominal default base URL (regional hosts are `{region}-aiplatform…`). */
export const VERTEX_GLOBAL_BASE_URL = 'https://aiplatform.googleapis.com'

/** Google's OAuth token endpoint, for service accounts that name none. */
const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token'

/** Used when the channel's `other` names no region: the one endpoint serving most current models. */
const DEFAULT_VERTEX_REGION = 'global'

/** `global`, or a Google Cloud region (`us-central1`, `europe-west4`, `us-east5`); it goes into a host name. */
const REGION = /^(?:global|[a-z]+-[a-z]+\d{1,2})$/

/** A Google Cloud project id (`my-project-123`, or a domain-scoped `example.com:my-project`). */
const PROJECT = /^[a-z0-9][a-z0-9.:-]*[a-z0-9]$/i

/** What a Google service-account key file holds and this adaptor uses. */
export interface ServiceAccount {
  clientEmail: string
  /** PKCS#8 PEM private key that signs the token assertions. */
  privateKey: string
  /** The key's id (`private_key_id`), sent as the assertion's `kid`. */
  privateKeyId?: string
  tokenUri: string
  projectId: string
}

/**
 * The service account of a channel key: the JSON key file Google issues (`type:
 * service_account`, `project_id`, `private_key_id`, `private_key`, `client_email`, `token_uri`),
 * written on one line (keys are one per line). A key that is not such a JSON object is refused
 * as malformed.
 */
export function serviceAccount (channel: ChannelConfig): ServiceAccount {
  const json = parseJson(channel.key.trim())
  if (!isRecord(json)) throw malformedKey('the Vertex AI key must be a service account\'s JSON key file, on one line')
  const clientEmail = str(json.client_email) ?? ''
  const privateKey = str(json.private_key) ?? ''
  const projectId = str(json.project_id) ?? ''
  const tokenUri = str(json.token_uri) ?? GOOGLE_TOKEN_URI
  const type = str(json.type)
  if (type !== undefined && type !== 'service_account') throw malformedKey(`the Vertex AI key is a "${type.slice(0, 40)}" credential, not a service account key`)
  if (clientEmail === '' || !privateKey.includes('PRIVATE KEY') || projectId === '') {
    throw malformedKey('the Vertex AI service account key needs client_email, private_key and project_id')
  }
  if (!PROJECT.test(projectId)) throw malformedKey('the Vertex AI service account key has an invalid project_id')
  if (!/^https?:\/\/[^/]/i.test(tokenUri)) throw malformedKey('the Vertex AI service account key has an invalid token_uri')
  const account: ServiceAccount = { clientEmail, privateKey, tokenUri, projectId }
  const keyId = str(json.private_key_id)
  if (keyId !== undefined && keyId !== '') account.privateKeyId = keyId
  return account
}

/** Whether `model` is one of Anthropic's (served through `publishers/anthropic`). */
export function isClaudeModel (model: string): boolean {
  return model.toLowerCase().startsWith('claude')
}

/** Vertex's ids of Anthropic models that are not Anthropic's id with `@` before the date. */
const CLAUDE_NAMES: Readonly<Record<string, string>> = {
  'claude-opus-4-5': 'claude-opus-4-5@20251101',
  'claude-haiku-4-5': 'claude-haiku-4-5@20251001',
  'claude-sonnet-4-5': 'claude-sonnet-4-5@20250929',
  'claude-opus-4-1': 'claude-opus-4-1@20250805',
  'claude-opus-4-0': 'claude-opus-4@20250514',
  'claude-sonnet-4-0': 'claude-sonnet-4@20250514',
  'claude-3-7-sonnet-latest': 'claude-3-7-sonnet@20250219',
  'claude-3-5-haiku-latest': 'claude-3-5-haiku@20241022'
}

/**
 * Vertex's id of an Anthropic model: Anthropic's dated ids take an `@` before the date
 * (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5@20250929`), its aliases the snapshot they
 * stand for; ids already with an `@`, and those without a date Vertex uses as they are
 * (`claude-opus-4-6`), pass unchanged.
 */
export function vertexClaudeName (model: string): string {
  if (model.includes('@')) return model
  return CLAUDE_NAMES[model] ?? model.replace(/-(\d{8})$/, '@$1')
}

/**
 * The region serving `model`: the channel's `other` is a region (`us-east5`, `global`), or a JSON
 * object of regions by model (the model as requested or as Vertex names it) with a `default`
 * entry (`{"default": "global", "claude-opus-4-1@20250805": "us-east5"}`); empty: `global`.
 */
export function vertexRegion (channel: ChannelConfig, model: string): string {
  const other = channel.other.trim()
  let region = other
  if (other === '') region = DEFAULT_VERTEX_REGION
  else if (other.startsWith('{')) {
    const map = parseJson(other)
    if (!isRecord(map)) throw malformedKey('the Vertex AI channel\'s other field is not valid JSON: write a region, or {"default": region, model: region}')
    const name = isClaudeModel(model) ? vertexClaudeName(model) : geminiModelName(model)
    region = str(map[model]) ?? str(map[name]) ?? str(map.default) ?? DEFAULT_VERTEX_REGION
  }
  region = region.trim()
  if (!REGION.test(region)) throw malformedKey(`"${region.slice(0, 40)}" is not a Vertex AI region`)
  return region
}

/** The channel's base URL (tests, private endpoints), else the region's Vertex AI host. */
function vertexBase (channel: ChannelConfig, region: string): string {
  if (channel.baseUrl.trim() !== '') {
    const base = resolveBaseUrl(channel, '')
    // A base pasted with its `/v1` is not doubled.
    return base.endsWith('/v1') ? base.slice(0, -'/v1'.length) : base
  }
  return region === 'global' ? VERTEX_GLOBAL_BASE_URL : `https://${region}-aiplatform.googleapis.com`
}

/**
 * The URL of a generation call: Gemini's `publishers/google/models/{model}:generateContent`
 * (`:streamGenerateContent?alt=sse`), or Anthropic's `publishers/anthropic/models/{model}:rawPredict`
 * (`:streamRawPredict`).
 */
export function vertexUrl (channel: ChannelConfig, account: ServiceAccount, model: string, stream: boolean): string {
  const region = vertexRegion(channel, model)
  const claude = isClaudeModel(model)
  const name = encodeURIComponent(claude ? vertexClaudeName(model) : geminiModelName(model)).replaceAll('%40', '@')
  const publisher = claude ? 'anthropic' : 'google'
  const method = claude ? (stream ? 'streamRawPredict' : 'rawPredict') : (stream ? 'streamGenerateContent?alt=sse' : 'generateContent')
  return `${vertexBase(channel, region)}/v1/projects/${projectPath(account.projectId)}/locations/${region}/publishers/${publisher}/models/${name}:${method}`
}

function projectPath (projectId: string): string {
  return encodeURIComponent(projectId).replaceAll('%3A', ':')
}
