import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database, NewPasskey, Passkey } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

const now = sql<number>`extract(epoch from now())::bigint`

/** The user's passkeys, oldest first. */
export async function listPasskeys (db: Db, userId: number): Promise<Passkey[]> {
  return await db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute()
}

/** How many passkeys the user has. */
export async function countPasskeys (db: Db, userId: number): Promise<number> {
  const row = await db.selectFrom('passkeys').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Whether the user has at least one passkey. */
export async function hasPasskeys (db: Db, userId: number): Promise<boolean> {
  return await db.selectFrom('passkeys').select('id').where('user_id', '=', userId).limit(1).executeTakeFirst() !== undefined
}

/** The passkey with this credential id (base64url, as the browser reports it), whoever owns it. */
export async function findPasskeyByCredentialId (db: Db, credentialId: string): Promise<Passkey | undefined> {
  return await db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst()
}

/** The user handle the user's authenticators already hold (from an existing passkey), if any. */
export async function findUserHandle (db: Db, userId: number): Promise<string | undefined> {
  const row = await db.selectFrom('passkeys').select('user_handle').where('user_id', '=', userId).orderBy('id').limit(1).executeTakeFirst()
  return row?.user_handle
}

/**
 * Stores a new passkey unless the user already has `max` of them (`'limit'`) or the credential
 * is registered already, to this or another account (`'duplicate'`). The user's row is locked
 * meanwhile, so two registrations at once cannot pass the limit together.
 */
export async function insertPasskey (db: Kysely<Database>, row: NewPasskey, max: number): Promise<Passkey | 'limit' | 'duplicate'> {
  return await db.transaction().execute(async (trx) => {
    await trx.selectFrom('users').select('id').where('id', '=', row.user_id).forUpdate().execute()
    if (await countPasskeys(trx, row.user_id) >= max) return 'limit'
    const inserted = await trx.insertInto('passkeys').values(row)
      .onConflict((oc) => oc.column('credential_id').doNothing())
      .returningAll().executeTakeFirst()
    return inserted ?? 'duplicate'
  })
}

/**
 * Records an accepted assertion: the new signature counter, the backup state and the time of
 * use, in one statement that only matches while the stored counter is below the new one (or
 * both are 0, for authenticators that keep no counter). False when it did not match: the
 * counter did not grow (a cloned authenticator, or the same assertion twice at once) or the
 * passkey is gone.
 */
export async function acceptPasskeyAssertion (db: Db, id: number, counter: number, backedUp: boolean): Promise<boolean> {
  const row = await db.updateTable('passkeys')
    .set({ counter, backed_up: backedUp, last_used_at: now })
    .where('id', '=', id)
    .where('counter', counter === 0 ? '=' : '<', counter)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** Renames one of the user's passkeys; false when it is not theirs. */
export async function renamePasskey (db: Db, userId: number, id: number, name: string): Promise<boolean> {
  const row = await db.updateTable('passkeys').set({ name }).where('id', '=', id).where('user_id', '=', userId).returning('id').executeTakeFirst()
  return row !== undefined
}

/** Removes one of the user's passkeys; the row removed, or undefined when it is not theirs. */
export async function deletePasskey (db: Db, userId: number, id: number): Promise<Passkey | undefined> {
  return await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst()
}

/** Removes every passkey of the user; how many there were. */
export async function deleteUserPasskeys (db: Db, userId: number): Promise<number> {
  const rows = await db.deleteFrom('passkeys').where('user_id', '=', userId).returning('id').execute()
  return rows.length
}
