import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ClassifiedFailure, ClientFormat, ConvertedResponse, Endpoint, ProviderAdaptor, RelayRequest } from '../core/adaptor.js'
import { malformedKey } from '../net/credentials.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { isRecord, list, num, parseJson, str } from '../core/json.js'
import { convertFloatEmbeddings } from '../jina/embeddings.js'
import { classifyOpenAIFailure, openAICompatible } from '../openai-compatible/index.js'
import type { UrlContext } from '../openai-compatible/types.js'

const NAME = 'Cloudflare'

/** Used when the channel has no base URL (the Cloudflare API; the account ID comes from `other`). */
const CLOUDFLARE_BASE_URL = 'https://api.cloudflare.com'

/** Workers AI models offered when a channel is created: current text generation and embedding models. */
const CLOUDFLARE_MODELS: readonly string[] = [
  '@cf/meta/llama-3.3-70b-instruct-fp8-fast',
  '@cf/meta/llama-4-scout-17b-16e-instruct',
  '@cf/meta/llama-3.1-8b-instruct',
  '@cf/openai/gpt-oss-120b',
  '@cf/openai/gpt-oss-20b',
  '@cf/qwen/qwq-32b',
  '@cf/qwen/qwen3-30b-a3b-fp8',
  '@cf/google/gemma-3-12b-it',
  '@cf/mistralai/mistral-small-3.1-24b-instruct',
  '@cf/baai/bge-m3',
  '@cf/baai/bge-large-en-v1.5'
]

/** The OpenAI endpoints Workers AI offers. */
const PATHS: Partial<Record<Endpoint, string>> = {
  chat: '/chat/completions',
  embeddings: '/embeddings',
  responses: '/responses'
}

const MODEL_SEARCH = '/models/search?task=Text%20Generation'

/** An account ID as Cloudflare shows it: letters, digits (32 hex in practice). */
const ACCOUNT_ID = /^[A-Za-z0-9_-]+$/

/** `…/client/v4/accounts/{id}/ai/v1` pasted as the base URL. */
const ACCOUNT_BASE = /^(.*\/client\/v4\/accounts\/[^/]+\/ai)\/v1$/

/** The channel's account ID (`other`); a channel without one cannot reach Workers AI and is disabled. */
function cloudflareAccount (channel: ChannelConfig): string {
  const account = channel.other.trim()
  if (account === '') throw malformedKey('the Cloudflare channel has no account ID: set it in the channel\'s "other" field')
  if (!ACCOUNT_ID.test(account)) throw malformedKey('the Cloudflare account ID in the channel\'s "other" field is not valid')
  return account
}

/**
 * Where a request goes. A bare origin (the default) gets
 * `/client/v4/accounts/{other}/ai/v1/...`; a base URL with a path is taken as the OpenAI prefix
 * itself (`…/accounts/{id}/ai/v1`, or an AI Gateway's `…/workers-ai/v1`), the account ID then
 * not needed. The model list needs the account path (AI Gateway has none).
 */
function cloudflareUrl ({ base, channel, target }: UrlContext): string | undefined {
  const path = target === 'models' ? undefined : PATHS[target]
  if (target !== 'models' && path === undefined) return undefined
  const hasPath = new URL(base).pathname.replace(/\/+$/, '') !== ''
  const prefix = hasPath ? base : `${base}/client/v4/accounts/${cloudflareAccount(channel)}/ai/v1`
  if (path !== undefined) return prefix + path
  const account = ACCOUNT_BASE.exec(prefix)
  return account === null ? undefined : account[1] + MODEL_SEARCH
}

function supports (endpoint: Endpoint, format: ClientFormat): boolean {
  return format === 'openai' && PATHS[endpoint] !== undefined
}

/** Codes of the Cloudflare API envelope and what they mean for the channel. */
const ACTIONS: Readonly<Record<string, ClassifiedFailure['action']>> = {
  // Authentication error, invalid token, missing credentials: the token is wrong or revoked.
  10000: 'disable',
  10001: 'disable',
  9106: 'disable',
  9109: 'disable',
  // Service unavailable for the account.
  3023: 'disable',
  // The daily free allocation of neurons is used up: the account serves nothing until the next
  // day (UTC). Disabled rather than retried, so that requests stop paying a round trip to a dead
  // account; the periodic channel test enables it again once the allocation is back.
  3036: 'disable',
  // No account behind the ID in the URL: the channel's account ID is wrong.
  7003: 'disable',
  // Out of capacity, timeouts: passing.
  3040: 'retry',
  3007: 'retry',
  3008: 'retry',
  // This account may not use the model (terms not accepted, private model): another channel may.
  5016: 'retry',
  5018: 'retry',
  3041: 'retry',
  // No such model, invalid input or model ID, request too large, no route for the URI.
  5007: 'client',
  5004: 'client',
  3003: 'client',
  3006: 'client',
  3042: 'client',
  7000: 'client'
}

/**
 * Classifies a non-2xx Cloudflare answer. The API's envelope
 * (`{success: false, errors: [{code, message}]}`) is read by its first error's code: 10000
 * (authentication), 3023 (account blocked), 3036 (daily free allocation used up) and 7003 (no
 * such account) disable the channel; 3040 (out of capacity), 3007/3008 (timeouts) and the codes
 * of a model this account may not use retry on another channel; 5007 (no such model), 7000 (no
 * route) and invalid inputs are the client's. Other codes, and OpenAI-style envelopes, go by
 * status as for any OpenAI-compatible upstream. The code is Cloudflare's, as text.
 */
function classifyCloudflareFailure (status: number, body: string): ClassifiedFailure {
  const json = parseJson(body)
  const first = isRecord(json) ? list(json.errors).find(isRecord) : undefined
  if (first === undefined) return classifyOpenAIFailure(status, body)
  const code = num(first.code) ?? Number(str(first.code))
  const envelope = { error: { message: str(first.message) ?? '', code: Number.isFinite(code) ? String(code) : null } }
  const failure = classifyOpenAIFailure(status, JSON.stringify(envelope))
  const action = Number.isFinite(code) ? ACTIONS[String(code)] : undefined
  if (action !== undefined) failure.action = action
  return failure
}

/** The model names of Workers AI's model search (`{result: [{name, task}]}`). */
function parseCloudflareModels (body: string): string[] {
  const json = parseJson(body)
  if (!isRecord(json) || !Array.isArray(json.result)) {
    throw new ProviderError(PROVIDER_ERROR_CODES.badUpstreamBody, 'the upstream answer is not a Workers AI model list')
  }
  const names = new Set<string>()
  for (const model of list(json.result)) {
    const name = isRecord(model) ? str(model.name) : undefined
    if (name !== undefined && name !== '') names.add(name)
  }
  return [...names]
}

const base = openAICompatible({
  type: CHANNEL_TYPE.cloudflare,
  name: NAME,
  defaultBaseUrl: CLOUDFLARE_BASE_URL,
  defaultModels: CLOUDFLARE_MODELS,
  urlFor: cloudflareUrl
})

/**
 * Type 39: Cloudflare Workers AI through its OpenAI-compatible endpoints (chat completions,
 * embeddings, responses) under `/client/v4/accounts/{account ID}/ai/v1`, with an API token as
 * the Bearer key and the account ID in the channel's `other`. Bodies, answers and streams are
 * OpenAI's (embeddings encoded as base64 here when the client asks and Workers AI sent floats);
 * errors come in Cloudflare's envelope; models are listed by Workers AI's model search.
 */
export const cloudflare: ProviderAdaptor = Object.freeze({
  ...base,
  supports,
  convertResponse: (channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse =>
    req.endpoint === 'embeddings' && req.format === 'openai'
      ? convertFloatEmbeddings(req, status, contentType, body)
      : base.convertResponse(channel, req, status, contentType, body),
  classifyFailure: classifyCloudflareFailure,
  parseModels: parseCloudflareModels
} satisfies ProviderAdaptor)
