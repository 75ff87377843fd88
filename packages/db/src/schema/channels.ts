import type { ChannelStatus } from '@modelgate/contracts'
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/** The state of one key of a multi-key channel. */
export interface ChannelKeyState {
  /** CHANNEL_STATUS: enabled, disabled by an admin, or autoDisabled by the system. */
  status: ChannelStatus
  /** Why the status last changed. */
  reason?: string
  /** Unix seconds of the last status change. */
  time?: number
  /** The last upstream error seen with this key, safe to show an admin. */
  last_error?: string
  last_error_time?: number
}

/** Upstream provider account. */
export interface ChannelsTable {
  id: Generated<number>
  /**
   * Channel type number (docs/domain.md), one of CHANNEL_TYPE when known. Kept a plain number, not
   * ChannelType: a type without an adaptor (or newer than this code) can be stored, just not relayed.
   */
  type: Generated<number>
  name: Generated<string>
  /** Upstream credential(s), one per line in multi-key channels; never logged. */
  key: string
  openai_organization: string | null
  max_input_tokens: Generated<number>
  base_url: Generated<string>
  /** Type-specific extra (Azure API version, Spark version, ...). */
  other: Generated<string>
  /** Comma-separated model names. */
  models: Generated<string>
  /** Comma-separated group names. */
  group: Generated<string>
  /** JSON object text: requested model -> upstream model. */
  model_mapping: Generated<string>
  /** JSON object text: upstream status -> status returned to the client. */
  status_code_mapping: Generated<string>
  auto_ban: Generated<number>
  test_model: Generated<string>
  priority: Generated<number>
  weight: Generated<number>
  tag: string | null
  proxy_url: Generated<string>
  /** Extra setting JSON text (CHANNEL_TYPE custom and codex). */
  setting: Generated<string>
  /** CHANNEL_STATUS: enabled, disabled (by an admin) or autoDisabled. */
  status: Generated<ChannelStatus>
  /** Milliseconds, from the last test. */
  response_time: Generated<number>
  test_time: Generated<number>
  balance: Generated<number>
  balance_updated_time: Generated<number>
  used_quota: Generated<number>
  created_time: Generated<number>
  /** JSON object text merged into every upstream body (after model mapping); '' for none. */
  param_override: Generated<string>
  /** JSON object text of headers added to or replacing the upstream request's; '' for none. */
  header_override: Generated<string>
  /** How a multi-key channel picks a key per request: 'random' or 'polling' (round robin). */
  multi_key_mode: Generated<string>
  /** Per-key state by key fingerprint (keyFingerprint); a key without an entry is enabled. */
  key_states: ColumnType<Record<string, ChannelKeyState>, Record<string, ChannelKeyState> | string | undefined, Record<string, ChannelKeyState> | string>
  /** JSON: status_reason, status_time. */
  other_info: ColumnType<Record<string, unknown>, Record<string, unknown> | string | undefined, Record<string, unknown> | string>
}
export type Channel = Selectable<ChannelsTable>
export type NewChannel = Insertable<ChannelsTable>
export type ChannelUpdate = Updateable<ChannelsTable>
