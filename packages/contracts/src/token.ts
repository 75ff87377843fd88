import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'
import { PagingQuery } from './paging.js'

/** Token status numbers (docs/domain.md). 3 and 4 are set by the system, never by a user. */
export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const

/**
 * A relay token as the console API shows it. Used as the response schema, so the key hash and
 * the sealed key can never be serialised by mistake.
 */
export const TokenView = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  name: Type.String(),
  /** The masked key, e.g. `sk-abcd**********wxyz`; never the full key. */
  key: Type.String(),
  /**
   * 1 enabled, 2 disabled, 3 expired, 4 exhausted. An enabled token past its expiry shows 3, and
   * a limited one with no quota left shows 4, since the gateway already refuses it.
   */
  status: Type.Integer(),
  /** Unix seconds. */
  created_time: Type.Integer(),
  /** Unix seconds of the last settled request; 0 when never used. */
  accessed_time: Type.Integer(),
  /** -1 never, else unix seconds. */
  expired_time: Type.Integer(),
  /** Quota units left (may be below zero after an overspend settles). */
  remain_quota: Type.Integer(),
  used_quota: Type.Integer(),
  unlimited_quota: Type.Boolean(),
  model_limits_enabled: Type.Boolean(),
  /** Comma-separated model names. */
  model_limits: Type.String(),
  /** One IP or CIDR per line; empty allows every address. */
  allow_ips: Type.String(),
  /** Empty means the owner's group. */
  group: Type.String(),
  /** Requests per minute across every gateway; 0 means no limit. */
  rpm_limit: Type.Integer(),
  /** Prompt plus completion tokens per minute; 0 means no limit. */
  tpm_limit: Type.Integer(),
  /** Requests in flight at once; 0 means no limit. */
  concurrency_limit: Type.Integer()
})
export type TokenView = Static<typeof TokenView>

/** A token just created: the view plus its full key, shown once so the console can copy it. */
export const CreatedTokenView = Type.Object({
  ...TokenView.properties,
  /** The full `sk-...` key. */
  full_key: Type.String()
})
export type CreatedTokenView = Static<typeof CreatedTokenView>

/** One page of the caller's tokens, newest first. */
export const TokenPage = Type.Object({
  items: Type.Array(TokenView),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer()
})
export type TokenPage = Static<typeof TokenPage>

export const TokenResponse = ApiEnvelope(TokenView)
export const TokenPageResponse = ApiEnvelope(TokenPage)
/** `POST /api/token/`: one token when count is 1, else a list. */
export const TokenCreateResponse = ApiEnvelope(Type.Union([CreatedTokenView, Type.Array(CreatedTokenView)]))
/** `POST /api/token/{id}/key`: the owner's full key. */
export const TokenKeyResponse = ApiEnvelope(Type.Object({ key: Type.String() }))

/** Latest accepted expiry: the end of year 9999, in unix seconds. */
export const TOKEN_MAX_EXPIRY = 253_402_300_799

/** Paging of the token list (see {@link PagingQuery}). */
export const TokenListQuery = Type.Object({
  ...PagingQuery.properties
})
export type TokenListQuery = Static<typeof TokenListQuery>

/** `GET /api/token/search`: `keyword` matches the name, `token` a full key or part of the masked key. */
export const TokenSearchQuery = Type.Object({
  ...TokenListQuery.properties,
  keyword: Type.Optional(Type.String({ maxLength: 100 })),
  token: Type.Optional(Type.String({ maxLength: 200 }))
})
export type TokenSearchQuery = Static<typeof TokenSearchQuery>

// Lengths here only bound the input; the name's 1..50 characters are checked with a message.
const tokenFields = {
  name: Type.String({ maxLength: 200 }),
  /** Default 500000 on create. */
  remain_quota: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  unlimited_quota: Type.Boolean(),
  /** -1 never, else unix seconds in the future. */
  expired_time: Type.Integer({ minimum: -1, maximum: TOKEN_MAX_EXPIRY }),
  model_limits_enabled: Type.Boolean(),
  /** Comma-separated model names (trimmed, duplicates dropped). */
  model_limits: Type.String({ maxLength: 20_000 }),
  /** One IP address or CIDR range per line. */
  allow_ips: Type.String({ maxLength: 20_000 }),
  /** Empty for the owner's group, else one of the groups the owner may use. */
  group: Type.String({ maxLength: 64 }),
  /** Requests per minute, 0 (no limit) to 1,000,000. */
  rpm_limit: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  /** Tokens per minute, 0 (no limit) to 2,000,000,000. */
  tpm_limit: Type.Integer({ minimum: 0, maximum: 2_000_000_000 }),
  /** Requests in flight at once, 0 (no limit) to 100,000. */
  concurrency_limit: Type.Integer({ minimum: 0, maximum: 100_000 })
}

/** `POST /api/token/`. */
export const TokenCreateBody = Type.Object({
  name: tokenFields.name,
  remain_quota: Type.Optional(tokenFields.remain_quota),
  unlimited_quota: Type.Optional(tokenFields.unlimited_quota),
  expired_time: Type.Optional(tokenFields.expired_time),
  model_limits_enabled: Type.Optional(tokenFields.model_limits_enabled),
  model_limits: Type.Optional(tokenFields.model_limits),
  allow_ips: Type.Optional(tokenFields.allow_ips),
  group: Type.Optional(tokenFields.group),
  rpm_limit: Type.Optional(tokenFields.rpm_limit),
  tpm_limit: Type.Optional(tokenFields.tpm_limit),
  concurrency_limit: Type.Optional(tokenFields.concurrency_limit),
  /** How many tokens to create, 1 to 100 (default 1); extra ones get a random name suffix. */
  count: Type.Optional(Type.Integer())
})
export type TokenCreateBody = Static<typeof TokenCreateBody>

/**
 * `PUT /api/token/`: absent fields stay as they are. With `?status_only=true` only `status` is
 * read (1 or 2). In a full update, status 1 enables, 2 disables, and 3 or 4 (shown states the
 * console may send back) change nothing.
 */
export const TokenUpdateBody = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  status: Type.Optional(Type.Integer()),
  name: Type.Optional(tokenFields.name),
  remain_quota: Type.Optional(tokenFields.remain_quota),
  unlimited_quota: Type.Optional(tokenFields.unlimited_quota),
  expired_time: Type.Optional(tokenFields.expired_time),
  model_limits_enabled: Type.Optional(tokenFields.model_limits_enabled),
  model_limits: Type.Optional(tokenFields.model_limits),
  allow_ips: Type.Optional(tokenFields.allow_ips),
  group: Type.Optional(tokenFields.group),
  rpm_limit: Type.Optional(tokenFields.rpm_limit),
  tpm_limit: Type.Optional(tokenFields.tpm_limit),
  concurrency_limit: Type.Optional(tokenFields.concurrency_limit)
})
export type TokenUpdateBody = Static<typeof TokenUpdateBody>
