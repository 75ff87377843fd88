import Type, { type Static } from 'typebox'

/** BullMQ queue the gateway writes one event per admitted request to; the billing worker settles it. */
export const USAGE_QUEUE = 'usage'

/**
 * One admitted relay request, whatever its outcome; or, with the ErrorLogEnabled option on, one
 * relay request refused after its caller was known (outcome `refused`: nothing was reserved,
 * quota 0; settlement writes its error log row and nothing else). Settlement is idempotent by
 * the request id.
 */
export const UsageEvent = Type.Object({
  request_id: Type.String({ minLength: 1, maxLength: 64 }),
  /** Unix seconds when the request arrived (with request_id, the log's unique key). */
  created_at: Type.Integer({ minimum: 0 }),
  user_id: Type.Integer({ minimum: 1 }),
  username: Type.String(),
  token_id: Type.Integer({ minimum: 0 }),
  token_name: Type.String(),
  unlimited_token: Type.Boolean(),
  /** 0 when no channel was reached. */
  channel_id: Type.Integer({ minimum: 0 }),
  /** The model the client asked for. */
  model_name: Type.String(),
  /** The model sent upstream after the channel's mapping. */
  upstream_model: Type.String(),
  group: Type.String(),
  is_stream: Type.Boolean(),
  ip: Type.String(),
  /** Milliseconds from arrival to the end of the answer. */
  use_time_ms: Type.Integer({ minimum: 0 }),
  /** Milliseconds from arrival to the first byte sent to the client; 0 when none. */
  first_response_ms: Type.Integer({ minimum: 0 }),
  prompt_tokens: Type.Integer({ minimum: 0 }),
  completion_tokens: Type.Integer({ minimum: 0 }),
  cached_tokens: Type.Integer({ minimum: 0 }),
  /** Prompt tokens written to the provider's prompt cache, a part of prompt_tokens (absent: none). */
  cache_write_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Audio parts of prompt_tokens and completion_tokens (absent: none). */
  audio_prompt_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  audio_completion_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Quota units reserved at admission (to be corrected in Redis). */
  reserved: Type.Integer({ minimum: 0 }),
  /** Quota units actually owed; 0 for a request that failed before any answer, and for a refused one. */
  quota: Type.Integer({ minimum: 0 }),
  /**
   * success: answered; failed: no answer (nothing billed); aborted: the client left mid-stream
   * (partial bill); refused: never admitted (nothing reserved, nothing billed, only logged; sent
   * only while ErrorLogEnabled is on).
   */
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('aborted'), Type.Literal('refused')]),
  /** Whether the usage came from the upstream or was counted by the gateway. */
  usage_source: Type.Union([Type.Literal('upstream'), Type.Literal('counted'), Type.Literal('none')]),
  /** The price details used (model_ratio, completion_ratio, group_ratio, model_price, ...). */
  price: Type.Record(Type.String(), Type.Number()),
  /** Channels tried before channel_id (the one that answered, else the last one tried), each once, for admins. */
  retried_channels: Type.Array(Type.Integer()),
  /**
   * Why the request failed: its status and what the client was told (the upstream's own words
   * only when they were about the request; the log's content, which its user sees), and, for
   * admins only (the log's admin_info.error), the upstream failure as classified: its status, its
   * code and its message cleaned by the providers' cleanUpstreamMessage, never its raw body.
   */
  error: Type.Optional(Type.Object({
    status: Type.Integer(),
    message: Type.String(),
    upstream: Type.Optional(Type.Object({
      status: Type.Integer(),
      code: Type.Optional(Type.String()),
      message: Type.String()
    }))
  })),
  /**
   * The entitlement item of a subscription that paid, chosen at admission by the user's billing
   * preference; absent when the wallet paid. quota_type 1 items count requests, 0 quota units.
   */
  paid_by: Type.Optional(Type.Object({
    item_id: Type.Integer({ minimum: 1 }),
    subscription_id: Type.Integer({ minimum: 1 }),
    plan_title: Type.String({ maxLength: 256 }),
    quota_type: Type.Union([Type.Literal(0), Type.Literal(1)])
  })),
  /** W3C trace context of the relay request (only when tracing is on): the settlement span continues its trace. */
  traceparent: Type.Optional(Type.String({ maxLength: 128 }))
})
export type UsageEvent = Static<typeof UsageEvent>

/**
 * One job on the usage queue: the events one gateway finished within a few milliseconds (up to
 * a few hundred). Batching keeps the queue's per-job cost off the hot path and lets the worker
 * settle many events in one transaction; settlement stays idempotent per event (request id).
 */
export const UsageBatch = Type.Object({
  events: Type.Array(UsageEvent, { minItems: 1, maxItems: 1000 })
})
export type UsageBatch = Static<typeof UsageBatch>

/** The job name of a {@link UsageBatch}; a job of any other name carries one bare UsageEvent. */
export const USAGE_BATCH_JOB = 'settle-batch'
