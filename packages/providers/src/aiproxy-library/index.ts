import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ProviderAdaptor, RelayRequest, UpstreamRequest } from '../core/adaptor.js'
import { foldedQuery } from '../dify/index.js'
import { list } from '../core/json.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'
import { chatTestRequest } from '../openai-compatible/probe.js'
import { servesOnly } from '../core/served.js'
import { AIPROXY_BASE_URL, libraryAskUrl, libraryHeaders, libraryKey } from './api.js'
import { classifyLibraryFailure } from './errors.js'
import { convertLibraryResponse } from './response.js'
import { createLibraryStream } from './stream.js'

const NAME = 'AI Proxy (knowledge base)'

const { supports, checked } = servesOnly(NAME, { openai: ['chat'] })

function buildRequest (channel: ChannelConfig, req: RelayRequest): UpstreamRequest {
  checked(req)
  const key = libraryKey(channel)
  const body = { model: req.model, query: foldedQuery(list(req.body?.messages)), libraryId: key.libraryId, stream: req.stream }
  return { method: 'POST', url: libraryAskUrl(resolveBaseUrl(channel, AIPROXY_BASE_URL)), headers: libraryHeaders(key), body: JSON.stringify(body) }
}

/**
 * Type 21: a knowledge base (library) of AIProxy (aiproxy.io), asked through
 * `POST /api/library/ask` with `{model, query, libraryId, stream}`. The channel key is
 * `<api key>|<library id>`. The conversation goes as one query (foldedQuery); the answer's
 * documents are appended as references. AIProxy reports no usage: the gateway counts the
 * question and the answer. OpenAI chat clients only; no model list.
 */
export const aiProxyLibrary: ProviderAdaptor = Object.freeze({
  type: CHANNEL_TYPE.aiProxyLibrary,
  name: NAME,
  defaultBaseUrl: AIPROXY_BASE_URL,
  defaultModels: Object.freeze(['gpt-3.5-turbo', 'gpt-4o-mini', 'gpt-4o']),
  supports,
  buildRequest,
  convertResponse: (_channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer) =>
    convertLibraryResponse(checked(req), status, contentType, body),
  createStream: (_channel: ChannelConfig, req: RelayRequest) => createLibraryStream(checked(req)),
  classifyFailure: classifyLibraryFailure,
  listModelsRequest: () => undefined,
  parseModels: () => [],
  testRequest: (_channel: ChannelConfig, model: string) => chatTestRequest(model)
} satisfies ProviderAdaptor)
