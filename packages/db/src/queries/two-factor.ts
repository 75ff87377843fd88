import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database, TwoFactorAuth } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

const now = sql<number>`extract(epoch from now())::bigint`

/** The user's second factor (enabled or pending), if any. */
export async function findTwoFactor (db: Db, userId: number): Promise<TwoFactorAuth | undefined> {
  return await db.selectFrom('two_factor_auth').selectAll().where('user_id', '=', userId).executeTakeFirst()
}

/** Whether the user has an enabled second factor. */
export async function isTwoFactorEnabled (db: Db, userId: number): Promise<boolean> {
  const row = await db.selectFrom('two_factor_auth').select('user_id').where('user_id', '=', userId).where('enabled', '=', true).executeTakeFirst()
  return row !== undefined
}

/** Of `userIds`, those with an enabled second factor. */
export async function findTwoFactorEnabledIds (db: Db, userIds: readonly number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set()
  const rows = await db.selectFrom('two_factor_auth').select('user_id').where('user_id', 'in', [...userIds]).where('enabled', '=', true).execute()
  return new Set(rows.map((r) => r.user_id))
}

async function insertBackupCodes (db: Db, userId: number, codeHashes: readonly string[]): Promise<void> {
  await db.deleteFrom('two_factor_backup_codes').where('user_id', '=', userId).execute()
  if (codeHashes.length > 0) await db.insertInto('two_factor_backup_codes').values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null }))).execute()
}

/**
 * Stores a new pending (not enabled) secret with fresh backup codes, replacing an earlier pending
 * setup. Returns false, changing nothing, when the user's second factor is already enabled.
 */
export async function savePendingTwoFactor (db: Kysely<Database>, userId: number, secretEncrypted: string, codeHashes: readonly string[]): Promise<boolean> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('two_factor_auth')
      .values({ user_id: userId, secret_encrypted: secretEncrypted, enabled: false, enabled_at: null, last_used_step: 0 })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret_encrypted: secretEncrypted, enabled_at: null, last_used_step: 0, updated_at: now })
        .where('two_factor_auth.enabled', '=', false))
      .returning('user_id')
      .executeTakeFirst()
    if (row === undefined) return false
    await insertBackupCodes(trx, userId, codeHashes)
    return true
  })
}

/**
 * Accepts a TOTP time-step once: moves last_used_step forward to `step` only when it is behind
 * it, in one statement, so two requests with the same code cannot both pass. With `enable`, the
 * pending factor becomes enabled in the same statement (and only a pending one matches).
 */
export async function acceptTwoFactorStep (db: Db, userId: number, step: number, opts: { enable?: boolean } = {}): Promise<boolean> {
  const rows = await db.updateTable('two_factor_auth')
    .set(opts.enable === true ? { last_used_step: step, enabled: true, enabled_at: now, updated_at: now } : { last_used_step: step, updated_at: now })
    .where('user_id', '=', userId)
    .where('last_used_step', '<', step)
    .where('enabled', '=', opts.enable !== true)
    .returning('user_id')
    .execute()
  return rows.length > 0
}

/** Spends a backup code (by its hash) once; false when unknown or already used. */
export async function consumeBackupCode (db: Db, userId: number, codeHash: string): Promise<boolean> {
  const row = await db.updateTable('two_factor_backup_codes').set({ used_at: now })
    .where('user_id', '=', userId).where('code_hash', '=', codeHash).where('used_at', 'is', null)
    .returning('id').executeTakeFirst()
  return row !== undefined
}

/** Replaces every backup code of the user (the old ones stop working). */
export async function replaceBackupCodes (db: Kysely<Database>, userId: number, codeHashes: readonly string[]): Promise<void> {
  await db.transaction().execute(async (trx) => { await insertBackupCodes(trx, userId, codeHashes) })
}

/** Backup codes the user has not spent. */
export async function countBackupCodesRemaining (db: Db, userId: number): Promise<number> {
  const row = await db.selectFrom('two_factor_backup_codes').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Removes the user's second factor and backup codes (run it in a transaction); returns the row removed, if any. */
export async function deleteTwoFactor (db: Db, userId: number): Promise<TwoFactorAuth | undefined> {
  await db.deleteFrom('two_factor_backup_codes').where('user_id', '=', userId).execute()
  return await db.deleteFrom('two_factor_auth').where('user_id', '=', userId).returningAll().executeTakeFirst()
}

/** Live users, and of them those with an enabled second factor. */
export async function countTwoFactorUsers (db: Db): Promise<{ total: number, enabled: number }> {
  const row = await db.selectFrom('users')
    .leftJoin('two_factor_auth', (j) => j.onRef('two_factor_auth.user_id', '=', 'users.id').on('two_factor_auth.enabled', '=', true))
    .select((eb) => [eb.fn.countAll<string>().as('total'), eb.fn.count<string>('two_factor_auth.user_id').as('enabled')])
    .where('users.deleted_at', 'is', null)
    .executeTakeFirstOrThrow()
  return { total: Number(row.total), enabled: Number(row.enabled) }
}
