/** The `other` JSON of a log row (docs/domain.md); every field may be missing on older rows. */
export interface LogOther {
  /** First-response time in milliseconds. */
  frt?: number
  model_ratio?: number
  completion_ratio?: number
  group_ratio?: number
  /** Dollars per call; -1 when priced per token. */
  model_price?: number
  cache_ratio?: number
  cached_tokens?: number
  /** Prompt tokens written to the provider's cache (a part of the prompt). */
  cache_write_tokens?: number
  create_cache_ratio?: number
  audio_ratio?: number
  audio_completion_ratio?: number
  /** True when the request had audio tokens; the text_/audio_ fields then split the counts. */
  audio?: boolean
  text_input?: number
  text_output?: number
  audio_input?: number
  audio_output?: number
  upstream_model?: string
  /** upstream, counted (by the gateway) or none. */
  usage_source?: string
  /** success, failed or aborted. */
  outcome?: string
  /**
   * Admins only: the channels tried, the serving one last, and for a failed request the upstream
   * failure as the gateway classified it (its message cleaned of hosts, links and keys).
   */
  admin_info?: { use_channel?: number[], error?: { status: number, code?: string, message: string } }
  /** What paid the request: 'subscription' (a plan's entitlement) or 'wallet' (absent on older rows: the wallet). */
  billing_source?: string
  subscription_id?: number
  subscription_item_id?: number
  /** The plan's title when the period began. */
  plan_title?: string
  /** 1 when the entitlement counts requests. */
  subscription_requests?: number
}

/** The plan's title when a subscription paid the row; undefined when the wallet did. */
export const paidByPlan = (other: LogOther | null): string | undefined => other?.billing_source === 'subscription' ? other.plan_title ?? '' : undefined

/** One row of `GET /api/log/` (admins: with channel_id) or `/api/log/self/`. */
export interface LogRow {
  id: number
  /** Unix seconds. */
  created_at: number
  /** 1 recharge, 2 consume, 3 manage, 4 system, 5 error; 0 unknown. */
  type: number
  user_id: number
  username: string
  token_name: string
  model_name: string
  channel_id?: number
  group: string
  quota: number
  prompt_tokens: number
  completion_tokens: number
  /** Seconds. */
  use_time: number
  is_stream: boolean
  content: string
  other: LogOther | null
}

/** `GET /api/log/stat` and `/api/log/self/stat`: the filter's consume total, and the last minute's requests and tokens. */
export interface LogStats { quota: number, rpm: number, tpm: number }

/** The filters both log endpoints take (blank or 0 means any); username and channel are admin-only. */
export interface LogQuery {
  type: number
  token_name: string
  model_name: string
  start_timestamp: number | undefined
  end_timestamp: number | undefined
  username?: string
  channel?: number | undefined
}
