import type { ChannelConfig, ConvertedResponse, Endpoint, RelayRequest } from '../core/adaptor.js'

/** The endpoints of the OpenAI wire protocol (everything but Anthropic and Gemini natives). */
export type OpenAIEndpoint = Exclude<Endpoint, 'messages' | 'generate_content' | 'embed_content' | 'batch_embed_contents'>

/** What a URL is asked for: one endpoint, or the model list. */
export type UrlTarget = OpenAIEndpoint | 'models'

/** A request body with its content type. */
export interface Payload {
  contentType: string
  body: string | Buffer
}

/**
 * How a streamed request asks for usage. `include_usage` merges `stream_options.include_usage`
 * into the client's `stream_options`; `strip` removes `stream_options`, for upstreams that reject
 * the field and report usage in every stream anyway (Mistral).
 */
export type StreamUsageMode = 'include_usage' | 'strip'

/** One capability of the OpenAI wire (chat, embeddings, ...): its request body and its answer. */
export interface Capability {
  body: (req: RelayRequest, mode: StreamUsageMode) => Payload
  convert: (req: RelayRequest, status: number, contentType: string, body: Buffer) => ConvertedResponse
}

/** Arguments of a URL builder. */
export interface UrlContext {
  /** The channel's base URL, else the type's default; no trailing slash. */
  base: string
  channel: ChannelConfig
  target: UrlTarget
  /** The upstream model; '' for the model list. */
  model: string
}

// Upstream wire shapes, for reference; values are read from `unknown` through the checks in json.ts.

/** OpenAI's error envelope. */
export interface WireError {
  error: { message: string, type: string, param: string | null, code: string | null }
}
