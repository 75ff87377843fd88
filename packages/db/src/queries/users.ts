import { ROLES, type Role, USER_STATUS } from '@modelgate/contracts'
import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database, NewUser, User, UserUpdate } from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

/**
 * Creates the super admin `username` with `passwordHash` when the users table is empty (no
 * account at all, deregistered ones included). Replicas starting together and first-run setup
 * requests may race here: each runs under one transaction-scoped advisory lock, so exactly one
 * insert wins whatever the usernames. `passwordIsDefault` (default true) flags the well-known first
 * password until it changes. Returns the created user, or undefined when users already existed.
 */
export async function insertRootUserIfNone (
  db: Kysely<Database>,
  root: { username: string, passwordHash: string, quota: number, passwordIsDefault?: boolean }
): Promise<User | undefined> {
  return await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('first_user'))`.execute(trx)
    // A new statement, a new snapshot: a first user committed while we waited is seen here.
    const { rows } = await sql<User>`
      insert into users (username, display_name, password_hash, role, status, quota, password_is_default)
      select ${root.username}, 'Root User', ${root.passwordHash}, ${ROLES.root}, ${USER_STATUS.enabled}, ${root.quota}, ${root.passwordIsDefault ?? true}
      where not exists (select 1 from users)
      on conflict (username) where deleted_at is null do nothing
      returning *
    `.execute(trx)
    return rows[0]
  })
}

/** Whether any account exists (deregistered ones too), and whether a live super admin does. */
export async function findUsersPresence (db: Db): Promise<{ any: boolean, root: boolean }> {
  const row = await db.selectNoFrom((eb) => [
    eb.exists(eb.selectFrom('users').select(sql`1`.as('one'))).as('any'),
    eb.exists(eb.selectFrom('users').select(sql`1`.as('one')).where('role', '>=', ROLES.root).where('deleted_at', 'is', null)).as('root')
  ]).executeTakeFirstOrThrow()
  return { any: Boolean(row.any), root: Boolean(row.root) }
}

/** Usernames of live, enabled accounts still signing in with the default password. */
export async function findDefaultPasswordUsernames (db: Db): Promise<string[]> {
  const rows = await db.selectFrom('users').select('username')
    .where('password_is_default', '=', true).where('deleted_at', 'is', null).where('status', '=', USER_STATUS.enabled)
    .orderBy('id').execute()
  return rows.map((r) => r.username)
}

/** A live (not deregistered) user by id. */
export async function findUserById (db: Db, id: number): Promise<User | undefined> {
  return await db.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst()
}

/** Columns an API may show; never the password or access-token hash. */
export const USER_PUBLIC_COLUMNS = [
  'id', 'username', 'display_name', 'email', 'github_id', 'wechat_id', 'telegram_id', 'linuxdo_id', 'role', 'status',
  'group', 'quota', 'used_quota', 'request_count', 'aff_code', 'aff_count', 'aff_quota', 'aff_history_quota',
  'inviter_id', 'concurrency_limit', 'setting', 'created_at', 'deleted_at', 'password_is_default'
] as const satisfies ReadonlyArray<keyof User>
export type PublicUser = Pick<User, typeof USER_PUBLIC_COLUMNS[number]>

/** Columns a user may be found by, each unique among live accounts in practice. */
export type UserLookupColumn = 'username' | 'email' | 'github_id' | 'linuxdo_id' | 'wechat_id' | 'telegram_id' | 'aff_code'

/** A live user whose `column` equals `value` (empty values never match). */
export async function findLiveUserBy (db: Db, column: UserLookupColumn, value: string): Promise<User | undefined> {
  if (value === '') return undefined
  return await db.selectFrom('users').selectAll().where(column, '=', value).where('deleted_at', 'is', null)
    .orderBy('id').limit(1).executeTakeFirst()
}

/** A live user by username, or by email when no username matches. */
export async function findLiveUserByLogin (db: Db, login: string): Promise<User | undefined> {
  return await findLiveUserBy(db, 'username', login) ?? (login.includes('@') ? await findLiveUserBy(db, 'email', login) : undefined)
}

/** The live user whose access token hash is `hash` (or one of several forms of it). */
export async function findUserByAccessTokenHash (db: Db, hash: string | readonly string[]): Promise<User | undefined> {
  const hashes = typeof hash === 'string' ? [hash] : [...hash]
  return await db.selectFrom('users').selectAll().where('access_token_hash', 'in', hashes).where('deleted_at', 'is', null).executeTakeFirst()
}

/** Users below `belowRole` (plus the caller), newest first, with optional keyword and group filters. */
export async function listUsers (db: Db, q: {
  belowRole: Role
  selfId: number
  keyword?: string
  group?: string
  offset: number
  limit: number
}): Promise<{ items: PublicUser[], total: number }> {
  let base = db.selectFrom('users').where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('role', '<', q.belowRole), eb('id', '=', q.selfId)]))
  if (q.group !== undefined && q.group !== '') base = base.where('group', '=', q.group)
  const keyword = q.keyword?.trim() ?? ''
  if (keyword !== '') {
    const like = `%${keyword.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    base = base.where((eb) => eb.or([
      ...(/^\d{1,9}$/.test(keyword) ? [eb('id', '=', Number(keyword))] : []),
      eb('username', 'ilike', like),
      eb('display_name', 'ilike', like),
      eb('email', 'ilike', like)
    ]))
  }
  const [items, count] = await Promise.all([
    base.select(USER_PUBLIC_COLUMNS).orderBy('id', 'desc').offset(q.offset).limit(q.limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  ])
  return { items, total: Number(count.n) }
}

export async function insertUser (db: Db, user: NewUser): Promise<User> {
  return await db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow()
}

export async function updateUser (db: Db, id: number, patch: UserUpdate): Promise<User | undefined> {
  return await db.updateTable('users').set(patch).where('id', '=', id).where('deleted_at', 'is', null).returningAll().executeTakeFirst()
}

/**
 * Adds `delta` (may be negative) to a live user's quota in one statement; undefined when the
 * user is gone or the balance would go below zero.
 */
export async function addUserQuota (db: Db, id: number, delta: number): Promise<User | undefined> {
  return await db.updateTable('users')
    .set((eb) => ({ quota: eb('quota', '+', delta) }))
    .where('id', '=', id).where('deleted_at', 'is', null)
    .where((eb) => eb(eb('quota', '+', delta), '>=', 0))
    .returningAll().executeTakeFirst()
}

/**
 * Takes back `amount` quota credited by a payment that was refunded. Unlike console edits it may
 * leave the balance below zero: the money went back to the payer, so what was spent from it is owed.
 * Undefined when the user is gone.
 */
export async function deductRefundedQuota (db: Db, id: number, amount: number): Promise<User | undefined> {
  return await db.updateTable('users')
    .set((eb) => ({ quota: eb('quota', '-', amount) }))
    .where('id', '=', id).where('deleted_at', 'is', null)
    .returningAll().executeTakeFirst()
}

/** Moves `amount` from aff_quota to quota atomically; undefined when aff_quota is short. */
export async function transferAffQuota (db: Db, id: number, amount: number): Promise<User | undefined> {
  return await db.updateTable('users')
    .set((eb) => ({ aff_quota: eb('aff_quota', '-', amount), quota: eb('quota', '+', amount) }))
    .where('id', '=', id).where('deleted_at', 'is', null).where('aff_quota', '>=', amount)
    .returningAll().executeTakeFirst()
}

/** Credits an inviter for one new invitee, in one statement. */
export async function creditInviter (db: Db, inviterId: number, quota: number): Promise<void> {
  await db.updateTable('users')
    .set((eb) => ({ aff_count: eb('aff_count', '+', 1), aff_quota: eb('aff_quota', '+', quota), aff_history_quota: eb('aff_history_quota', '+', quota) }))
    .where('id', '=', inviterId).where('deleted_at', 'is', null)
    .execute()
}

/** Marks a user deregistered and ends every session; frees the username and bindings for reuse. */
export async function softDeleteUser (db: Db, id: number): Promise<User | undefined> {
  return await db.updateTable('users')
    .set((eb) => ({ deleted_at: Math.floor(Date.now() / 1000), session_version: eb('session_version', '+', 1), access_token_hash: null }))
    .where('id', '=', id).where('deleted_at', 'is', null)
    .returningAll().executeTakeFirst()
}

/** Distinct enabled models reachable from `group` (the routing index). */
export async function findModelsForGroup (db: Db, group: string): Promise<string[]> {
  const rows = await db.selectFrom('abilities').select('model').distinct().where('group', '=', group).where('enabled', '=', true).orderBy('model').execute()
  return rows.map((r) => r.model)
}
