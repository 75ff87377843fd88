import type { Migration } from 'kysely'
import * as m20261122000000 from './2026_11_22_000000_create_core_tables.js'
import * as m20261122000100 from './2026_11_22_000100_create_logs.js'
import * as m20261122000200 from './2026_11_22_000200_add_user_session_fields.js'
import * as m20261122000300 from './2026_11_22_000300_create_settlements.js'
import * as m20261123000000 from './2026_11_23_000000_replace_logs_indexes.js'
import * as m20261124000000 from './2026_11_24_000000_add_limits_and_channel_keys.js'
import * as m20261127000000 from './2026_11_27_000000_add_task_billing.js'
import * as m20261128000000 from './2026_11_28_000000_add_task_deleted_at.js'
import * as m20261129000000 from './2026_11_29_000000_create_audit_logs.js'
import * as m20261129000100 from './2026_11_29_000100_add_two_factor.js'
import * as m20261129000200 from './2026_11_29_000200_create_user_sessions.js'
import * as m20261129000300 from './2026_11_29_000300_create_custom_oauth_providers.js'
import * as m20261129000400 from './2026_11_29_000400_create_passkeys.js'
import * as m20261129000500 from './2026_11_29_000500_create_checkins.js'
import * as m20261129000600 from './2026_11_29_000600_add_stripe_top_ups.js'
import * as m20261129000700 from './2026_11_29_000700_create_subscriptions.js'
import * as m20261129000800 from './2026_11_29_000800_add_creem.js'

/** Every migration, by name; names sort in the order they run. Add new ones at the end. */
export const migrations: Readonly<Record<string, Migration>> = {
  '2026_11_22_000000_create_core_tables': m20261122000000,
  '2026_11_22_000100_create_logs': m20261122000100,
  '2026_11_22_000200_add_user_session_fields': m20261122000200,
  '2026_11_22_000300_create_settlements': m20261122000300,
  '2026_11_23_000000_replace_logs_indexes': m20261123000000,
  '2026_11_24_000000_add_limits_and_channel_keys': m20261124000000,
  '2026_11_27_000000_add_task_billing': m20261127000000,
  '2026_11_28_000000_add_task_deleted_at': m20261128000000,
  '2026_11_29_000000_create_audit_logs': m20261129000000,
  '2026_11_29_000100_add_two_factor': m20261129000100,
  '2026_11_29_000200_create_user_sessions': m20261129000200,
  '2026_11_29_000300_create_custom_oauth_providers': m20261129000300,
  '2026_11_29_000400_create_passkeys': m20261129000400,
  '2026_11_29_000500_create_checkins': m20261129000500,
  '2026_11_29_000600_add_stripe_top_ups': m20261129000600,
  '2026_11_29_000700_create_subscriptions': m20261129000700,
  '2026_11_29_000800_add_creem': m20261129000800
}
