import type { Outbound } from '../net/outbound.js'
/**
 * The contract every channel type implements. It imports nothing from provider folders; the
 * registry (registry.ts) is the only list of types. The gateway relays through it and the
 * control plane tests channels and lists models through it.
 *
 * Protocol-neutral by design: the client may speak OpenAI, Anthropic or Gemini; an adaptor says
 * which (endpoint, client format) pairs it serves and converts both ways, so native protocols
 * (Anthropic messages, Gemini generateContent, Baidu, Alibaba, ...) fit without changing it.
 */

/** What the client called. */
export type Endpoint =
  | 'chat'
  | 'completions'
  | 'embeddings'
  | 'images_generations'
  | 'images_edits'
  | 'audio_speech'
  | 'audio_transcriptions'
  | 'audio_translations'
  | 'moderations'
  | 'rerank'
  | 'responses'
  | 'messages'
  | 'generate_content'
  /** Gemini's `:embedContent` (one content, one embedding). */
  | 'embed_content'
  /** Gemini's `:batchEmbedContents` (several contents, one embedding each). */
  | 'batch_embed_contents'

/** The wire format the client speaks (request, response, stream and errors). */
export type ClientFormat = 'openai' | 'anthropic' | 'gemini'

/** One channel as an adaptor needs it (secrets included: never log this object). */
export interface ChannelConfig {
  id: number
  type: number
  /** One credential; multi-key channels pick one per request before calling the adaptor. */
  key: string
  /** Empty means the type's default base URL. No trailing slash. */
  baseUrl: string
  /** Type-specific extra (Azure API version, Spark version, ...). */
  other: string
  organization: string | null
  /** Parsed `setting` JSON (types 8 and 45); {} when empty. */
  setting: Readonly<Record<string, unknown>>
  /** http(s)://, socks5:// or socks5h:// proxy for this channel's upstream calls; empty or absent: direct. */
  proxyUrl?: string
  /** Top-level fields set on every upstream JSON body after the adaptor built it (`param_override`). */
  paramOverride?: Readonly<Record<string, unknown>>
  /** Headers added to or replacing (by name, case-insensitively) the adaptor's; `{api_key}` stands for `key`. */
  headerOverride?: Readonly<Record<string, string>>
  /**
   * Renewed credentials shared by every process serving the channel (the gateway's Redis), for
   * types whose tokens rotate (Claude Code, Codex). Absent: renewals are kept in this process only.
   */
  credentials?: CredentialStore
  /**
   * The service's outbound guard (SSRF policy and connection pools) its calls go through; absent:
   * the default guard (metadata addresses refused, private ones allowed).
   */
  outbound?: Outbound
}

/**
 * A store shared by every replica, for credentials a provider renews and rotates (an OAuth
 * refresh token works once; the answer brings the next one): one process renews under the lock
 * while the others wait, and all read what it stored. Ids are hashes, never a secret; values are
 * JSON text written and read by the adaptor.
 */
export interface CredentialStore {
  /** The value stored under `id`; undefined when there is none. */
  get: (id: string) => Promise<string | undefined>
  /** Stores `value` under `id`, kept longer than a refresh token lives (the gateway: 90 days). */
  set: (id: string, value: string) => Promise<void>
  /**
   * Takes the lock `id` for `ttlMs` unless someone holds it: a token to release it with, else
   * undefined. Locks are apart from values: a lock and a value may share an id.
   */
  acquire: (id: string, ttlMs: number) => Promise<string | undefined>
  /** Releases the lock `id` when `token` still holds it. */
  release: (id: string, token: string) => Promise<void>
  /**
   * Writes renewed credentials into the channel's own record (key or setting), so that a restart
   * or an emptied store does not lose them; called by the lock holder before it releases the lock.
   * Absent: they live in the store only. Failures are the store's to log: it should not throw.
   */
  save?: (channelId: number, update: CredentialUpdate) => Promise<void>
}

/** How a renewal changes a channel's stored credentials (see {@link CredentialStore.save}). */
export interface CredentialUpdate {
  /**
   * One credential of the key field (one line) rewritten with the renewed tokens, in its own
   * format; undefined when the line is not a credential this renewal replaces.
   */
  key: (credential: string) => string | undefined
  /** The setting JSON with the renewed tokens merged in, when it holds the replaced ones; else undefined. */
  setting: (setting: Readonly<Record<string, unknown>>) => Record<string, unknown> | undefined
}

/** An inbound request, after routing and model mapping. */
export interface RelayRequest {
  endpoint: Endpoint
  format: ClientFormat
  /** The model to ask the upstream for (after the channel's model_mapping). */
  model: string
  stream: boolean
  /**
   * Parsed JSON body for JSON endpoints. Unknown fields must pass through untouched; an adaptor
   * sets `model` (and, when streaming OpenAI chat, `stream_options.include_usage`).
   */
  body?: Readonly<Record<string, unknown>>
  /** Multipart endpoints (images/edits, audio transcriptions): the raw body, forwarded as is. */
  raw?: { contentType: string, data: Buffer }
  /**
   * Client headers an adaptor may forward upstream (names in lower case), for example
   * `anthropic-beta` and `anthropic-version` of an Anthropic client. Absent: none to forward.
   */
  headers?: Readonly<Record<string, string>>
}

/** An HTTP request to the upstream. */
export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE'
  url: string
  headers: Record<string, string>
  body?: string | Buffer
}

/** Token counts reported by the upstream. */
export interface Usage {
  promptTokens: number
  completionTokens: number
  /** Prompt tokens served from the provider's cache (a part of promptTokens, never extra). */
  cachedTokens?: number
  /**
   * Prompt tokens written to the provider's prompt cache by this request (a part of promptTokens,
   * never extra; Anthropic bills them above the input price).
   */
  cacheWriteTokens?: number
  /** Audio input tokens (a part of promptTokens), billed at the model's audio ratio. */
  audioPromptTokens?: number
  /** Audio output tokens (a part of completionTokens). */
  audioCompletionTokens?: number
}

/** A complete (non-streamed) upstream answer, converted for the client. */
export interface ConvertedResponse {
  status: number
  contentType: string
  body: string | Buffer
  /** Undefined when the upstream sent none; the gateway then counts tokens itself. */
  usage?: Usage
  /** Completion text, for counting when usage is missing (chat and completions only). */
  text?: string
  /**
   * Set when a 2xx answer reports a failure in its body (Baidu answers `{error_code, error_msg}`
   * with HTTP 200): the relay handles it as it handles a refused answer of HTTP `status` (the
   * status the failure stands for, set by the adaptor), classified so (retry on another channel,
   * disable, or answer the client with `message`); `body` is never sent.
   */
  failure?: ClassifiedFailure
}

/**
 * Converts one upstream stream to the client's format, chunk by chunk, in constant memory
 * (it must not keep the whole answer).
 */
export interface StreamConverter {
  /** Bytes from the upstream in; bytes for the client out (empty when nothing to send yet). */
  push: (chunk: Buffer) => Buffer
  /** The upstream ended: anything left to send (for example the final `data: [DONE]`). */
  end: () => Buffer
  /** Usage, once the upstream has reported it. */
  usage: () => Usage | undefined
  /** Completion text seen since the last call (for counting when usage never comes). */
  takeText: () => string
  /** Roughly how much text takeText() would return now (bytes held for it), to bound memory. */
  untakenBytes: () => number
  /** True once the upstream signalled a normal end (OpenAI `[DONE]`, Anthropic `message_stop`, ...). */
  finished: () => boolean
  /**
   * True when the client gets the upstream's OpenAI stream as it came (normalised only): a
   * converter that reads OpenAI chunks itself (to another protocol) may then take the upstream's
   * bytes directly instead of this converter's output, and read every event once.
   */
  readonly passThrough?: boolean
}

/** What to do about a failed upstream answer (ARCHITECTURE.md "Relay and money"). */
export type FailureAction =
  /** 429, 5xx, timeouts: try another channel. */
  | 'retry'
  /** Bad credential or exhausted account: disable the channel (when auto_ban) and try another. */
  | 'disable'
  /** The client's fault (400, 404 model not found, ...): answer the client, no retry. */
  | 'client'

export interface ClassifiedFailure {
  action: FailureAction
  /**
   * The upstream's message, cleaned (cleanUpstreamMessage: no keys, links, hosts or addresses), or
   * a generic one; the relay tells it to the client only for a `'client'` failure, admins always.
   */
  message: string
  /** The provider's own error type or code, when it has one. */
  code?: string
}

export interface ProviderAdaptor {
  /** Channel type number (docs/domain.md). */
  readonly type: number
  readonly name: string
  /** Used when the channel's base URL is empty. */
  readonly defaultBaseUrl: string
  /** Models offered when a channel of this type is created (`GET /api/models`). */
  readonly defaultModels: readonly string[]
  /** Whether this adaptor can serve `endpoint` to a client speaking `format`. */
  supports: (endpoint: Endpoint, format: ClientFormat) => boolean
  buildRequest: (channel: ChannelConfig, req: RelayRequest) => UpstreamRequest
  /**
   * The last step before a request leaves (relay calls, channel tests, model lists), after the
   * channel's overrides: signs it (AWS SigV4, Tencent TC3) or adds an access token obtained from
   * the key (Baidu, Vertex AI; cached, see credentials.ts). Throws a CredentialError when the
   * credentials are refused or the exchange fails. Absent: the request goes as built.
   */
  authorize?: (channel: ChannelConfig, up: UpstreamRequest) => Promise<UpstreamRequest>
  /**
   * Whether an answer with this content type to a streamed request is the provider's stream
   * framing (absent: `text/event-stream` only). AWS Bedrock streams `application/vnd.amazon.eventstream`.
   */
  isStream?: (contentType: string) => boolean
  /** Converts a 2xx non-streamed answer. */
  convertResponse: (channel: ChannelConfig, req: RelayRequest, status: number, contentType: string, body: Buffer) => ConvertedResponse
  createStream: (channel: ChannelConfig, req: RelayRequest) => StreamConverter
  /** Classifies a non-2xx answer (body as text, possibly not JSON). */
  classifyFailure: (status: number, body: string) => ClassifiedFailure
  /** The request that lists the upstream's models, and how to read the answer. */
  listModelsRequest: (channel: ChannelConfig) => UpstreamRequest | undefined
  parseModels: (body: string) => string[]
  /** A minimal request that proves the channel works with `model` (channel test). */
  testRequest: (channel: ChannelConfig, model: string) => RelayRequest
}
