import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'
import { PagingQuery } from './paging.js'

/** Channel status numbers (docs/domain.md). 3 is set by the system, never by an admin. */
export const CHANNEL_STATUS = { enabled: 1, disabled: 2, autoDisabled: 3 } as const

/** Why and when the status last changed. */
export const ChannelOtherInfo = Type.Object({
  status_reason: Type.Optional(Type.String()),
  /** Unix seconds. */
  status_time: Type.Optional(Type.Integer())
})

/** How a multi-key channel picks its key: at random, or in turn (round robin). */
export const MULTI_KEY_MODES = ['random', 'polling'] as const
export type MultiKeyMode = typeof MULTI_KEY_MODES[number]

/** The state of one key of a multi-key channel; a key without one is enabled. */
export const ChannelKeyState = Type.Object({
  /** 1 enabled, 2 disabled by an admin, 3 disabled by the system. */
  status: Type.Integer(),
  reason: Type.Optional(Type.String()),
  /** Unix seconds of the last status change. */
  time: Type.Optional(Type.Integer()),
  /** The last upstream error seen with this key. */
  last_error: Type.Optional(Type.String()),
  last_error_time: Type.Optional(Type.Integer())
})
export type ChannelKeyState = Static<typeof ChannelKeyState>

/**
 * An upstream channel as lists show it. Used as the response schema of every list, so the key
 * can never be serialised there by mistake.
 */
export const ChannelView = Type.Object({
  id: Type.Integer(),
  /** Channel type number (docs/domain.md, `GET /api/models/types`). */
  type: Type.Integer(),
  name: Type.String(),
  openai_organization: Type.Union([Type.String(), Type.Null()]),
  /** 0 means no limit. */
  max_input_tokens: Type.Integer(),
  /** Empty means the type's default; no trailing slash. */
  base_url: Type.String(),
  /** Type-specific extra: Azure API version, Spark version, ... */
  other: Type.String(),
  /** Comma-separated model names. */
  models: Type.String(),
  /** Comma-separated group names. */
  group: Type.String(),
  /** JSON object text: requested model -> upstream model; empty for none. */
  model_mapping: Type.String(),
  /** JSON object text: upstream HTTP status -> status returned to the client; empty for none. */
  status_code_mapping: Type.String(),
  /** 1: the system may auto-disable the channel; 0: never. */
  auto_ban: Type.Integer(),
  /** Model used by channel tests; empty means the first model. */
  test_model: Type.String(),
  /** Higher tiers are tried first. */
  priority: Type.Integer(),
  /** Weighted random choice inside a priority tier; 0 or more. */
  weight: Type.Integer(),
  tag: Type.Union([Type.String(), Type.Null()]),
  proxy_url: Type.String(),
  /** Extra setting JSON text (types 8 and 45). */
  setting: Type.String(),
  /** 1 enabled, 2 disabled, 3 auto-disabled. */
  status: Type.Integer(),
  /** Milliseconds of the last test; 0 when never tested. */
  response_time: Type.Integer(),
  /** Unix seconds of the last test; 0 when never tested. */
  test_time: Type.Integer(),
  balance: Type.Number(),
  balance_updated_time: Type.Integer(),
  /** Quota units spent through this channel. */
  used_quota: Type.Integer(),
  created_time: Type.Integer(),
  other_info: ChannelOtherInfo,
  /** JSON object text merged into every upstream body after model mapping; '' for none. */
  param_override: Type.String(),
  /** JSON object text of headers added or replaced on upstream requests; '' for none. */
  header_override: Type.String(),
  /** 'random' or 'polling': how a multi-key channel picks a key per request. */
  multi_key_mode: Type.String(),
  /** Per-key states by key fingerprint (first 16 hex digits of the key's SHA-256). */
  key_states: Type.Record(Type.String(), ChannelKeyState),
  /** How many credentials (key lines) the channel holds; 0 when its key cannot be opened. */
  key_count: Type.Integer(),
  /**
   * The first credential masked as `GET /api/channel/{id}/keys` masks each (its first 3 and last 4
   * characters, the last 2 of a key under 12); '' when the key cannot be opened. Keys are
   * write-only: no list or detail answer carries one, only `POST /api/channel/{id}/key` (root).
   */
  key_hint: Type.String()
})
export type ChannelView = Static<typeof ChannelView>

/** `GET /api/channel/{id}` (admins only): the view, with the key's hint and never the key. */
export const ChannelDetail = ChannelView
export type ChannelDetail = Static<typeof ChannelDetail>

/** `POST /api/channel/{id}/key` (root only, after a fresh verification): the stored key, one credential per line. */
export const ChannelKeyReveal = Type.Object({ key: Type.String() })
export type ChannelKeyReveal = Static<typeof ChannelKeyReveal>
export const ChannelKeyRevealResponse = ApiEnvelope(ChannelKeyReveal)

/** `POST /api/channel/copy/{id}`: the copy's name is the original's plus `suffix` (default ' copy'). */
export const ChannelCopyQuery = Type.Object({ suffix: Type.Optional(Type.String({ maxLength: 50 })) })
export type ChannelCopyQuery = Static<typeof ChannelCopyQuery>

/**
 * A tag row of a list in tag mode: the channels sharing `tag` (those passing the search filter),
 * counted as one row in paging, with fields aggregated over them for the parent row.
 */
export const ChannelTagRow = Type.Object({
  tag: Type.String(),
  children: Type.Array(ChannelView),
  /** The children's common status; 0 when they differ. */
  status: Type.Integer(),
  /** Children with status 1. */
  enabled_count: Type.Integer(),
  /** The children's common type; null when they differ. */
  type: Type.Union([Type.Integer(), Type.Null()]),
  /** The children's common priority; null when they differ. */
  priority: Type.Union([Type.Integer(), Type.Null()]),
  /** The children's common weight; null when they differ. */
  weight: Type.Union([Type.Integer(), Type.Null()]),
  /** Every group of the children, comma-separated, sorted. */
  group: Type.String(),
  /** Every model of the children, comma-separated, sorted. */
  models: Type.String(),
  /** Sum over the children. */
  used_quota: Type.Integer(),
  /** Sum over the children. */
  balance: Type.Number()
})
export type ChannelTagRow = Static<typeof ChannelTagRow>

/** A list row: a channel, or (tag mode) a tag row, told apart by `children`. */
export const ChannelListItem = Type.Union([ChannelView, ChannelTagRow])
export type ChannelListItem = Static<typeof ChannelListItem>

export const ChannelPage = Type.Object({
  items: Type.Array(ChannelListItem),
  page: Type.Integer(),
  page_size: Type.Integer(),
  /** Rows in all pages (a tag counts once in tag mode). */
  total: Type.Integer()
})
export type ChannelPage = Static<typeof ChannelPage>

/**
 * `GET /api/channel/`: priority descending then id descending, or id descending with `id_sort`;
 * `tag_mode` groups channels sharing a tag into one {@link ChannelTagRow}.
 */
export const ChannelListQuery = Type.Object({
  ...PagingQuery.properties,
  id_sort: Type.Optional(Type.Boolean()),
  tag_mode: Type.Optional(Type.Boolean())
})
export type ChannelListQuery = Static<typeof ChannelListQuery>

/**
 * `GET /api/channel/search`: `keyword` matches the id (when numeric), a substring of the name
 * (case-insensitive) or one whole key (never part of one: keys are write-only, and a substring
 * match would read a key out character by character); `group` and `model` match one element of
 * the comma lists.
 */
export const ChannelSearchQuery = Type.Object({
  ...ChannelListQuery.properties,
  keyword: Type.Optional(Type.String({ maxLength: 200 })),
  group: Type.Optional(Type.String({ maxLength: 64 })),
  model: Type.Optional(Type.String({ maxLength: 200 }))
})
export type ChannelSearchQuery = Static<typeof ChannelSearchQuery>

const CommaList = Type.Union([Type.String({ maxLength: 100_000 }), Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 10_000 })])

/**
 * Editable channel fields. Lengths only bound the input; the rules (docs/domain.md) are
 * checked with messages. Fields the console sends back from a loaded channel (id, status,
 * response_time, other_info, ...) are accepted and ignored where they are not editable.
 */
const channelFields = {
  name: Type.String({ maxLength: 200 }),
  type: Type.Integer(),
  /** One credential per line. Blank in an update keeps the stored key. */
  key: Type.String({ maxLength: 1_000_000 }),
  openai_organization: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]),
  /** http(s) URL; trailing slashes are removed. Type 8 may contain `{model}`. */
  base_url: Type.String({ maxLength: 2000 }),
  /** Default '2023-06-01-preview' for type 3 and 'v2.1' for type 18 when blank. */
  other: Type.String({ maxLength: 10_000 }),
  /** Comma string or array; stored trimmed, without duplicates. At least one. */
  models: CommaList,
  /** Comma string or array, like `groups`; default ['default']. */
  group: CommaList,
  groups: CommaList,
  /** JSON object text, model -> model; entries with a blank side are dropped. */
  model_mapping: Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()]),
  /** JSON object text, HTTP status -> HTTP status. */
  status_code_mapping: Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()]),
  /** 1 (default) or 0; booleans accepted. */
  auto_ban: Type.Union([Type.Integer({ minimum: 0, maximum: 1 }), Type.Boolean()]),
  test_model: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]),
  /** Integer, -999 or more; default 0. */
  priority: Type.Integer(),
  /** Integer; a negative weight becomes 0. Default 0. */
  weight: Type.Integer(),
  /** Blank or null for none. */
  tag: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]),
  /** http, https or socks5 URL; blank for none. */
  proxy_url: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
  /** JSON object text (types 8 and 45). */
  setting: Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()]),
  max_input_tokens: Type.Integer({ minimum: 0 }),
  /** JSON object text (fields merged into the upstream body); blank for none. */
  param_override: Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()]),
  /** JSON object text, header name -> string value (`{api_key}` stands for the key used); blank for none. */
  header_override: Type.Union([Type.String({ maxLength: 20_000 }), Type.Null()]),
  /** 'random' (default) or 'polling'. */
  multi_key_mode: Type.String({ maxLength: 20 })
}
const optionalFields = Object.fromEntries(Object.entries(channelFields).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof channelFields]: Type.TOptional<typeof channelFields[K]>
}

/**
 * `POST /api/channel/` (create; copies go through `POST /api/channel/copy/{id}`, which keeps the key).
 * `mode: 'batch'` or `batch: true` creates one channel per non-empty key line; otherwise a
 * multi-line key makes one multi-key channel.
 */
export const ChannelCreateBody = Type.Object({
  ...optionalFields,
  mode: Type.Optional(Type.String({ maxLength: 20 })),
  batch: Type.Optional(Type.Boolean())
}, { additionalProperties: true })
export type ChannelCreateBody = Static<typeof ChannelCreateBody>

/**
 * `PUT /api/channel/`: absent fields stay as they are; a blank key keeps the stored one.
 * `{id, status}`, `{id, priority}` and `{id, weight}` (any of the three, nothing else) are the
 * inline edits of the list. An admin sets status 1 or 2 only.
 */
export const ChannelUpdateBody = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  ...optionalFields,
  status: Type.Optional(Type.Integer())
}, { additionalProperties: true })
export type ChannelUpdateBody = Static<typeof ChannelUpdateBody>

/**
 * `PUT /api/channel/tag`: overwrites the fields given on every channel with `tag`; absent, null
 * or blank fields stay as they are, except `new_tag: ''`, which dissolves the tag. At least one
 * change is required.
 */
export const ChannelTagBody = Type.Object({
  tag: Type.String({ minLength: 1, maxLength: 200 }),
  new_tag: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  model_mapping: Type.Optional(Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()])),
  groups: Type.Optional(Type.Union([CommaList, Type.Null()])),
  models: Type.Optional(Type.Union([CommaList, Type.Null()])),
  priority: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  weight: Type.Optional(Type.Union([Type.Integer(), Type.Null()]))
})
export type ChannelTagBody = Static<typeof ChannelTagBody>

/** `POST /api/channel/tag/enabled` and `/tag/disabled`. */
export const ChannelTagStatusBody = Type.Object({ tag: Type.String({ minLength: 1, maxLength: 200 }) })
export type ChannelTagStatusBody = Static<typeof ChannelTagStatusBody>

/** `POST /api/channel/fetch_models`: model list of unsaved settings (the first key line is used). */
export const FetchModelsBody = Type.Object({
  type: Type.Integer(),
  base_url: Type.Optional(Type.String({ maxLength: 2000 })),
  key: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  proxy_url: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]))
}, { additionalProperties: true })
export type FetchModelsBody = Static<typeof FetchModelsBody>

export const ChannelResponse = ApiEnvelope(ChannelView)
export const ChannelDetailResponse = ApiEnvelope(ChannelDetail)
export const ChannelPageResponse = ApiEnvelope(ChannelPage)
/** `POST /api/channel/`: the created channels, in order (one unless batch). */
export const ChannelCreateResponse = ApiEnvelope(Type.Array(ChannelView))
/** Counts: deleted disabled channels, channels fixed, channels changed by a tag edit. */
export const ChannelCountResponse = ApiEnvelope(Type.Integer())
/** `GET /api/channel/models`: every known model, sorted. */
export const ChannelModelsResponse = ApiEnvelope(Type.Array(Type.Object({ id: Type.String() })))
/** `GET /api/channel/fetch_models/{id}` and `POST /api/channel/fetch_models`: the upstream's model ids. */
export const FetchModelsResponse = ApiEnvelope(Type.Array(Type.String()))

/**
 * `GET /api/channel/test/{id}`: `time` (seconds, fractional) sits beside success and message;
 * 0 when nothing could be sent.
 */
export const ChannelTestResponse = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  time: Type.Number()
})
export type ChannelTestResponse = Static<typeof ChannelTestResponse>

/**
 * `GET /api/channel/update_balance/{id}`: the balance just read, in US dollars, beside success and
 * message (absent when it failed).
 */
export const ChannelBalanceResponse = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  balance: Type.Optional(Type.Number())
})
export type ChannelBalanceResponse = Static<typeof ChannelBalanceResponse>

/** `GET /api/channel/update_balance`: channels whose balance was read, and those that failed. */
export const ChannelBalancesResult = Type.Object({
  updated: Type.Integer(),
  failed: Type.Integer()
})
export type ChannelBalancesResult = Static<typeof ChannelBalancesResult>
export const ChannelBalancesResponse = ApiEnvelope(ChannelBalancesResult)

/** One key of a channel as `GET /api/channel/{id}/keys` lists it (never the key itself). */
export const ChannelKeyView = Type.Object({
  /** 0-based position in the key text (one key per line); the console counts from 1. */
  index: Type.Integer(),
  /** First 16 hex digits of the key's SHA-256: the name its state goes by. */
  fingerprint: Type.String(),
  /** The key masked: its first 3 and last 4 characters. */
  hint: Type.String(),
  /** 1 enabled, 2 disabled by an admin, 3 disabled by the system. */
  status: Type.Integer(),
  /** Why the status last changed; '' when it never did. */
  reason: Type.String(),
  /** Unix seconds of the last status change; 0 when it never changed. */
  time: Type.Integer(),
  /** The last upstream error seen with this key; '' when none. */
  last_error: Type.String(),
  /** Unix seconds of that error; 0 when none. */
  last_error_time: Type.Integer()
})
export type ChannelKeyView = Static<typeof ChannelKeyView>

/** `GET` and `PUT /api/channel/{id}/keys`: the channel's keys in key-line order. */
export const ChannelKeysResponse = ApiEnvelope(Type.Array(ChannelKeyView))

/**
 * `PUT /api/channel/{id}/keys`: enables (1) or disables (2) one key of a multi-key channel, named
 * by its fingerprint or, without one, its index. The channel's own status is left as it is.
 */
export const ChannelKeyStatusBody = Type.Object({
  fingerprint: Type.Optional(Type.String({ maxLength: 64 })),
  index: Type.Optional(Type.Integer({ minimum: 0 })),
  status: Type.Integer()
})
export type ChannelKeyStatusBody = Static<typeof ChannelKeyStatusBody>

/** `GET /api/channel/test/{id}`: `model` to test with; `key_index` tests that key only (0-based). */
export const ChannelTestQuery = Type.Object({
  model: Type.Optional(Type.String({ maxLength: 200 })),
  key_index: Type.Optional(Type.Integer({ minimum: 0 }))
})
export type ChannelTestQuery = Static<typeof ChannelTestQuery>

/**
 * Channel types whose provider has a billing endpoint, so `update_balance` can read their balance
 * (OpenAI, custom, Moonshot, SiliconCloud, DeepSeek); the console offers the update only for them.
 */
export const BALANCE_CHANNEL_TYPES: readonly number[] = [1, 8, 25, 40, 43]
