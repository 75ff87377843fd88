import { TOKEN_STATUS, type TokenStatus } from '@modelgate/contracts'
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely'
import type { Database, NewToken, Token } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/** Token columns an API may show: never the key hash or the sealed key. */
export const TOKEN_PUBLIC_COLUMNS = [
  'id', 'user_id', 'name', 'key_hint', 'status', 'created_time', 'accessed_time', 'expired_time', 'remain_quota',
  'used_quota', 'unlimited_quota', 'model_limits_enabled', 'model_limits', 'allow_ips', 'group', 'rpm_limit', 'tpm_limit',
  'concurrency_limit'
] as const satisfies ReadonlyArray<keyof Token>
export type PublicToken = Pick<Token, typeof TOKEN_PUBLIC_COLUMNS[number]>

/** Filters of {@link listUserTokens}; all optional filters combine with AND. */
export interface UserTokenFilter {
  userId: number
  /** Substring of the name, case-insensitive. */
  keyword?: string
  /** Matches a token whose key hashes to `keyHash` or whose masked key contains `keyFragment`. */
  key?: { keyHash: string, keyFragment: string }
  offset: number
  limit: number
}

const likeEscape = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/** A user's live tokens, newest first. */
export async function listUserTokens (db: Db, q: UserTokenFilter): Promise<{ items: PublicToken[], total: number }> {
  let base = db.selectFrom('tokens').where('user_id', '=', q.userId).where('deleted_at', 'is', null)
  if (q.keyword !== undefined && q.keyword !== '') base = base.where('name', 'ilike', `%${likeEscape(q.keyword)}%`)
  const key = q.key
  if (key !== undefined) {
    // Keys are case-sensitive, so the masked key is matched with LIKE, not ILIKE.
    base = base.where((eb) => eb.or([eb('key_hash', '=', key.keyHash), eb('key_hint', 'like', `%${likeEscape(key.keyFragment)}%`)]))
  }
  const [items, count] = await Promise.all([
    base.select(TOKEN_PUBLIC_COLUMNS).orderBy('id', 'desc').offset(q.offset).limit(q.limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  ])
  return { items, total: Number(count.n) }
}

/** A live token of `userId` (another user's token is not found). Includes the sealed key. */
export async function findUserToken (db: Db, userId: number, id: number): Promise<Token | undefined> {
  return await db.selectFrom('tokens').selectAll().where('id', '=', id).where('user_id', '=', userId).where('deleted_at', 'is', null)
    .executeTakeFirst()
}

/**
 * Inserts tokens for `userId` unless the user would then hold more than `maxLive` live tokens.
 * The owner's row is locked first, so concurrent batches of one user cannot pass the limit
 * together. Returns the new rows (with their key hashes, to pair them with their keys), or
 * undefined when the limit refuses.
 */
export async function insertUserTokens (
  db: Kysely<Database>,
  userId: number,
  rows: NewToken[],
  maxLive: number
): Promise<Array<PublicToken & Pick<Token, 'key_hash'>> | undefined> {
  return await db.transaction().execute(async (trx) => {
    await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirst()
    const live = await trx.selectFrom('tokens').select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', userId).where('deleted_at', 'is', null).executeTakeFirstOrThrow()
    if (Number(live.n) + rows.length > maxLive) return undefined
    return await trx.insertInto('tokens').values(rows).returning([...TOKEN_PUBLIC_COLUMNS, 'key_hash']).execute()
  })
}

/** Editable token fields; absent ones are left as they are. */
export interface TokenEdit {
  name?: string
  expired_time?: number
  unlimited_quota?: boolean
  model_limits_enabled?: boolean
  model_limits?: string
  allow_ips?: string
  group?: string
  rpm_limit?: number
  tpm_limit?: number
  concurrency_limit?: number
}

/** The statuses an owner may set a token to. */
export type SettableTokenStatus = typeof TOKEN_STATUS.enabled | typeof TOKEN_STATUS.disabled

/**
 * Status after an edit, computed from the row's values after the edit: expired when past
 * expiry, exhausted when limited with nothing left, else enabled.
 */
function statusWhenValid (edit: TokenEdit, quotaDelta: number, now: number): RawBuilder<TokenStatus> {
  const expiry = edit.expired_time !== undefined ? sql`${edit.expired_time}::bigint` : sql.ref('expired_time')
  const unlimited = edit.unlimited_quota !== undefined ? sql`${edit.unlimited_quota}::boolean` : sql.ref('unlimited_quota')
  return sql<TokenStatus>`case
    when ${expiry} <> -1 and ${expiry} <= ${now}::bigint then ${sql.lit(TOKEN_STATUS.expired)}
    when not ${unlimited} and remain_quota + ${quotaDelta}::bigint <= 0 then ${sql.lit(TOKEN_STATUS.exhausted)}
    else ${sql.lit(TOKEN_STATUS.enabled)} end`
}

/**
 * Edits a live token of `userId` in one statement. `quotaDelta` is added to remain_quota in SQL,
 * so spending settled meanwhile is kept. Status: `enable` sets enabled (or expired/exhausted when
 * the edited token still is), `disable` sets disabled; otherwise an expired or exhausted token
 * the edit made valid again becomes enabled, and every other status stays.
 */
export async function updateUserToken (
  db: Db,
  userId: number,
  id: number,
  change: { edit: TokenEdit, quotaDelta: number, status?: 'enable' | 'disable', now: number }
): Promise<PublicToken | undefined> {
  const valid = statusWhenValid(change.edit, change.quotaDelta, change.now)
  const status = change.status === 'disable'
    ? sql.lit<TokenStatus>(TOKEN_STATUS.disabled)
    : change.status === 'enable'
      ? valid
      : sql<TokenStatus>`case when status in (${sql.lit(TOKEN_STATUS.expired)}, ${sql.lit(TOKEN_STATUS.exhausted)}) then ${valid} else status end`
  return await db.updateTable('tokens')
    .set((eb) => ({ ...change.edit, remain_quota: eb('remain_quota', '+', change.quotaDelta), status }))
    .where('id', '=', id).where('user_id', '=', userId).where('deleted_at', 'is', null)
    .returning(TOKEN_PUBLIC_COLUMNS).executeTakeFirst()
}

/**
 * Sets a live token's status to disabled, or to enabled only while it is neither past its expiry nor (when
 * limited) out of quota: checked in the same statement, so a concurrent settlement cannot slip
 * in between. Undefined when nothing was changed.
 */
export async function setUserTokenStatus (db: Db, userId: number, id: number, status: SettableTokenStatus, now: number): Promise<PublicToken | undefined> {
  let q = db.updateTable('tokens').set({ status }).where('id', '=', id).where('user_id', '=', userId).where('deleted_at', 'is', null)
  if (status === TOKEN_STATUS.enabled) {
    q = q.where((eb) => eb.or([eb('expired_time', '=', -1), eb('expired_time', '>', now)]))
      .where((eb) => eb.or([eb('unlimited_quota', '=', true), eb('remain_quota', '>', 0)]))
  }
  return await q.returning(TOKEN_PUBLIC_COLUMNS).executeTakeFirst()
}

/** Marks a live token of `userId` deleted; undefined when there was none. */
export async function softDeleteUserToken (db: Db, userId: number, id: number, now: number): Promise<{ id: number } | undefined> {
  return await db.updateTable('tokens').set({ deleted_at: now })
    .where('id', '=', id).where('user_id', '=', userId).where('deleted_at', 'is', null)
    .returning('id').executeTakeFirst()
}
