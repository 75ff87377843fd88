// Frozen migration: imports nothing from the project.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('tokens')
    // Per-token limits, enforced by the gateways across replicas; 0 means no limit.
    .addColumn('rpm_limit', 'integer', (c) => c.notNull().defaultTo(0).check(sql`rpm_limit >= 0`))
    .addColumn('tpm_limit', 'integer', (c) => c.notNull().defaultTo(0).check(sql`tpm_limit >= 0`))
    .addColumn('concurrency_limit', 'integer', (c) => c.notNull().defaultTo(0).check(sql`concurrency_limit >= 0`))
    .execute()
  await db.schema
    .alterTable('channels')
    // JSON object text merged into the upstream body, and headers added or replaced; '' for none.
    .addColumn('param_override', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('header_override', 'text', (c) => c.notNull().defaultTo(''))
    // How a multi-key channel picks a key: 'random' or 'polling' (round robin).
    .addColumn('multi_key_mode', 'text', (c) => c.notNull().defaultTo('random'))
    // Per-key state of a multi-key channel, by key fingerprint (first 16 hex digits of the key's
    // SHA-256): {status: 1 | 2 | 3, reason, time, last_error, last_error_time}. Absent means enabled.
    .addColumn('key_states', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('channels').dropColumn('param_override').dropColumn('header_override').dropColumn('multi_key_mode').dropColumn('key_states').execute()
  await db.schema.alterTable('tokens').dropColumn('rpm_limit').dropColumn('tpm_limit').dropColumn('concurrency_limit').execute()
}
