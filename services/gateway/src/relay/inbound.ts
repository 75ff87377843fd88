import {
  anthropicError,
  anthropicToChatRequest,
  type ClientFormat,
  chatStreamToAnthropic,
  chatStreamToResponses,
  chatToAnthropicResponse,
  chatStreamToGemini,
  chatToGeminiResponse,
  chatToResponsesResponse,
  cleanUpstreamMessage,
  geminiEmbedToOpenAIRequest,
  geminiError,
  geminiToChatRequest,
  openAIEmbeddingsToGemini,
  responsesToChatRequest,
  type ConvertedResponse,
  type Endpoint,
  type ProviderAdaptor,
  type RelayRequest,
  type StreamConverter
} from '@modelgate/providers'

/**
 * How one client request reaches one channel: in the client's own protocol when the channel's
 * adaptor speaks it (an Anthropic client to a Claude channel: the body passes through), else
 * converted to an OpenAI endpoint the channel serves and back (an Anthropic client to an OpenAI
 * channel, a Responses client to a Claude channel: chat), chunk by chunk.
 */
export interface ChannelCall {
  req: RelayRequest
  /** The adaptor's complete answer in the client's format. */
  response: (converted: ConvertedResponse) => ConvertedResponse
  /** The adaptor's stream converter, wrapped to speak the client's format. */
  stream: (inner: StreamConverter) => StreamConverter
  /** The body of an error the client sees, from the upstream's own error text when it has the client's shape. */
  errorBody: (status: number, message: string, upstreamText: string, code: string | null) => unknown
}

export interface Inbound {
  format: ClientFormat
  endpoint: Endpoint
  stream: boolean
  /** Gemini streams: SSE (`alt=sse`) or one JSON array sent piece by piece. */
  streamMode?: 'sse' | 'json'
  /** The model the client asked for (before a channel's mapping). */
  model: string
  body?: Readonly<Record<string, unknown>>
  raw?: RelayRequest['raw']
  /** Client headers adaptors may forward (lower-case names). */
  headers?: Readonly<Record<string, string>>
  /** The body in the form of the conversion's OpenAI endpoint, once made (see {@link convertedBody}). */
  converted?: Record<string, unknown>
}

const same = <T>(x: T): T => x

/**
 * The upstream's own OpenAI error object: its type, param and code (those it has, cleaned like
 * its message), nothing else it may carry; its message is replaced by the cleaned one.
 */
function openAIErrorObject (text: string): Record<string, unknown> | undefined {
  const error = parsedObject(text)?.['error']
  if (typeof error !== 'object' || error === null || typeof (error as Record<string, unknown>)['message'] !== 'string') return undefined
  const own: Record<string, unknown> = {}
  for (const field of ['type', 'param', 'code']) {
    const value = (error as Record<string, unknown>)[field]
    if (value === null || typeof value === 'number') own[field] = value
    else if (typeof value === 'string') own[field] = cleanUpstreamMessage(value)
  }
  return own
}

/** A string field of an upstream's error, cleaned; undefined when it is not a string. */
function cleanField (value: unknown): string | undefined {
  return typeof value === 'string' ? cleanUpstreamMessage(value) : undefined
}

function parsedObject (text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

const openAIError = (_status: number, message: string, upstreamText: string, code: string | null) =>
  ({ error: { ...openAIErrorObject(upstreamText) ?? { type: 'invalid_request_error', param: null, code }, message } })

/** An Anthropic upstream's own error (its type kept, the message cleaned), else one made from the status. */
const anthropicErrorBody = (status: number, message: string, upstreamText: string) => {
  const own = parsedObject(upstreamText)
  const error = own?.['type'] === 'error' ? own['error'] : undefined
  const type = typeof error === 'object' && error !== null ? cleanField((error as Record<string, unknown>)['type']) : undefined
  if (type !== undefined) return { type: 'error', error: { type, message } }
  return anthropicError(status, message)
}

/**
 * How requests of one (format, endpoint) reach channels that do not speak it, through an OpenAI
 * endpoint they serve (chat, or embeddings), and how the answers come back.
 */
interface Conversion {
  /** The OpenAI endpoint the channel is called on. */
  target: Endpoint
  /** The client's body in the target's form. */
  request: (inbound: Inbound) => Record<string, unknown>
  response: (answer: Record<string, unknown>, model: string, inbound: Inbound) => Record<string, unknown>
  /** Absent for endpoints that never stream. */
  stream?: (model: string, inbound: Inbound) => StreamConverter
  errorBody: ChannelCall['errorBody']
}

/**
 * The call of `adaptor` for this client request with `model` (after mapping), or undefined when
 * the channel can serve it neither natively nor converted.
 */
export function channelCall (inbound: Inbound, adaptor: ProviderAdaptor, model: string, converted: () => Record<string, unknown>): ChannelCall | undefined {
  const { format, endpoint, stream } = inbound
  // A Gemini stream as one JSON array is made here from chat chunks; channels stream SSE.
  const native = adaptor.supports(endpoint, format) && !(format === 'gemini' && stream && inbound.streamMode === 'json')
  if (native) {
    return {
      req: { endpoint, format, model, stream, body: inbound.body, raw: inbound.raw, headers: inbound.headers },
      response: same,
      stream: same,
      errorBody: format === 'anthropic' ? anthropicErrorBody : format === 'gemini' ? geminiErrorBody : openAIError
    }
  }
  const conversion = CONVERSIONS[format][endpoint]
  if (conversion !== undefined && adaptor.supports(conversion.target, 'openai')) {
    const { stream: outer } = conversion
    return {
      req: { endpoint: conversion.target, format: 'openai', model, stream, body: converted() },
      response: (answer) => {
        const json = parsedObject(Buffer.isBuffer(answer.body) ? answer.body.toString('utf8') : answer.body)
        if (json === undefined) return answer
        return { ...answer, contentType: 'application/json', body: JSON.stringify(conversion.response(json, model, inbound)) }
      },
      stream: (inner) => (outer === undefined ? inner : chained(inner, outer(model, inbound))),
      errorBody: conversion.errorBody
    }
  }
  return undefined
}

/**
 * The OpenAI request (chat, or embeddings) a body in another protocol becomes for channels that
 * do not speak it (made once per request and kept on `inbound`).
 */
export function convertedBody (inbound: Inbound): Record<string, unknown> {
  if (inbound.converted !== undefined) return inbound.converted
  const conversion = CONVERSIONS[inbound.format][inbound.endpoint]
  inbound.converted = conversion === undefined ? { ...inbound.body } : conversion.request(inbound)
  return inbound.converted
}

/** A Google error of the upstream's own (its status kept, the message cleaned), else one made from the status. */
const geminiErrorBody = (status: number, message: string, upstreamText: string) => {
  const own = parsedObject(upstreamText)?.['error']
  const rpcStatus = typeof own === 'object' && own !== null ? cleanField((own as Record<string, unknown>)['status']) : undefined
  if (rpcStatus !== undefined) return { error: { code: status, message, status: rpcStatus } }
  return geminiError(status, message)
}

/**
 * An adaptor's OpenAI chat stream converter followed by `outer`, which turns its chunks into the
 * client's protocol. When the adaptor's converter passes the upstream's OpenAI stream through,
 * `outer` reads the upstream's bytes itself (its usage and text are the upstream's): each event
 * is read once, not twice.
 */
function chained (inner: StreamConverter, outer: StreamConverter): StreamConverter {
  if (inner.passThrough === true) return outer
  return {
    push: (chunk) => outer.push(inner.push(chunk)),
    end: () => {
      const rest = outer.push(inner.end())
      const last = outer.end()
      return rest.length === 0 ? last : last.length === 0 ? rest : Buffer.concat([rest, last])
    },
    usage: () => inner.usage() ?? outer.usage(),
    // The outer converter keeps the same text: dropped with the inner's, so it never piles up.
    takeText: () => {
      outer.takeText()
      return inner.takeText()
    },
    untakenBytes: () => inner.untakenBytes(),
    // Finished once the client has the end of its protocol's stream (made when the chat stream ends).
    finished: () => outer.finished()
  }
}

/** The event that tells a streaming client its stream broke off, in its format. */
export function interruptionEvent (format: ClientFormat, message: string): string {
  if (format === 'anthropic') return `event: error\ndata: ${JSON.stringify(anthropicError(502, message))}\n\n`
  if (format === 'gemini') return `data: ${JSON.stringify(geminiError(500, message))}\n\n`
  return `data: ${JSON.stringify({ error: { message, type: 'upstream_error', param: null, code: 'stream_interrupted' } })}\n\n`
}

/** The error body of a refusal in the client's format (OpenAI's envelope, or Anthropic's). */
export function refusalBody (format: ClientFormat, status: number, error: { message: string, type: string, code: string | null }): unknown {
  if (format === 'anthropic') return anthropicError(status, error.message)
  if (format === 'gemini') return geminiError(status, error.message)
  return { error: { message: error.message, type: error.type, param: null, code: error.code } }
}

const geminiEmbed = (batch: boolean): Conversion => ({
  target: 'embeddings',
  request: (inbound) => geminiEmbedToOpenAIRequest(inbound.body ?? {}, inbound.model, batch),
  response: (answer) => openAIEmbeddingsToGemini(answer, batch),
  errorBody: geminiErrorBody
})

/** The conversions, by the client's format and the endpoint it called. */
const CONVERSIONS: Readonly<Record<ClientFormat, Partial<Record<Endpoint, Conversion>>>> = {
  openai: {
    responses: {
      target: 'chat',
      request: (inbound) => responsesToChatRequest(inbound.body ?? {}),
      response: (chat, model, inbound) => chatToResponsesResponse(chat, model, inbound.body),
      stream: (model, inbound) => chatStreamToResponses(model, inbound.body),
      errorBody: openAIError
    }
  },
  anthropic: {
    messages: {
      target: 'chat',
      request: (inbound) => anthropicToChatRequest(inbound.body ?? {}),
      response: chatToAnthropicResponse,
      stream: (model) => chatStreamToAnthropic(model),
      errorBody: anthropicErrorBody
    }
  },
  gemini: {
    generate_content: {
      target: 'chat',
      request: (inbound) => geminiToChatRequest(inbound.body ?? {}, inbound.model, inbound.stream),
      response: chatToGeminiResponse,
      stream: (model, inbound) => chatStreamToGemini(model, inbound.streamMode ?? 'sse'),
      errorBody: geminiErrorBody
    },
    embed_content: geminiEmbed(false),
    batch_embed_contents: geminiEmbed(true)
  }
}
