import { type Kysely, sql, type Transaction } from 'kysely'
import type {
  CustomOAuthProvider,
  CustomOAuthProviderUpdate,
  Database,
  NewCustomOAuthProvider,
  User
} from '../schema/index.js'

type Db = Kysely<Database> | Transaction<Database>

const now = sql<number>`extract(epoch from now())::bigint`

/** Every custom sign-in provider, by id. */
export async function listCustomOAuthProviders (db: Db): Promise<CustomOAuthProvider[]> {
  return await db.selectFrom('custom_oauth_providers').selectAll().orderBy('id').execute()
}

/** The enabled providers as the sign-in page shows them, by id. */
export async function listEnabledCustomOAuthProviders (db: Db): Promise<Array<Pick<CustomOAuthProvider, 'id' | 'slug' | 'name' | 'kind'>>> {
  return await db.selectFrom('custom_oauth_providers').select(['id', 'slug', 'name', 'kind']).where('enabled', '=', true).orderBy('id').execute()
}

export async function findCustomOAuthProviderById (db: Db, id: number): Promise<CustomOAuthProvider | undefined> {
  return await db.selectFrom('custom_oauth_providers').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findCustomOAuthProviderBySlug (db: Db, slug: string): Promise<CustomOAuthProvider | undefined> {
  return await db.selectFrom('custom_oauth_providers').selectAll().where('slug', '=', slug).executeTakeFirst()
}

export async function insertCustomOAuthProvider (db: Db, row: NewCustomOAuthProvider): Promise<CustomOAuthProvider> {
  return await db.insertInto('custom_oauth_providers').values(row).returningAll().executeTakeFirstOrThrow()
}

/** Applies `patch` (and a new updated_at); undefined when the provider does not exist. */
export async function updateCustomOAuthProvider (db: Db, id: number, patch: CustomOAuthProviderUpdate): Promise<CustomOAuthProvider | undefined> {
  return await db.updateTable('custom_oauth_providers').set({ ...patch, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst()
}

/**
 * Deletes a provider unless live users are bound to it: `links` is then how many, and nothing is
 * deleted. Links left by deregistered users go with the provider; `within` runs in the same
 * transaction (the audit entry). The provider's row is locked, so a sign-in binding it meanwhile
 * waits and then fails on the missing provider.
 */
export async function deleteCustomOAuthProvider (
  db: Kysely<Database>,
  id: number,
  within?: (trx: Transaction<Database>, row: CustomOAuthProvider) => Promise<void>
): Promise<{ deleted?: CustomOAuthProvider, links: number }> {
  return await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('custom_oauth_providers').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
    if (row === undefined) return { links: 0 }
    const live = await trx.selectFrom('custom_oauth_links as l').innerJoin('users as u', 'u.id', 'l.user_id')
      .select((eb) => eb.fn.countAll<string>().as('n')).where('l.provider_id', '=', id).where('u.deleted_at', 'is', null).executeTakeFirstOrThrow()
    const links = Number(live.n)
    if (links > 0) return { links }
    await trx.deleteFrom('custom_oauth_links').where('provider_id', '=', id).execute()
    await trx.deleteFrom('custom_oauth_providers').where('id', '=', id).execute()
    if (within !== undefined) await within(trx, row)
    return { deleted: row, links: 0 }
  })
}

/** The live user a provider account signs in as, if any. */
export async function findCustomOAuthLinkOwner (db: Db, providerId: number, subject: string): Promise<User | undefined> {
  return await db.selectFrom('users').selectAll('users')
    .innerJoin('custom_oauth_links as l', 'l.user_id', 'users.id')
    .where('l.provider_id', '=', providerId).where('l.subject', '=', subject).where('users.deleted_at', 'is', null)
    .executeTakeFirst()
}

/**
 * Binds a provider account to `userId`, replacing the account the user had at that provider. A
 * link the account kept to a deregistered user is dropped first; one to a live user makes this
 * fail with a unique violation (callers check the owner first, under a lock).
 */
export async function upsertCustomOAuthLink (db: Db, userId: number, providerId: number, subject: string): Promise<void> {
  await db.deleteFrom('custom_oauth_links').where('provider_id', '=', providerId).where('subject', '=', subject)
    .where('user_id', 'in', (eb) => eb.selectFrom('users').select('id').where('deleted_at', 'is not', null))
    .execute()
  await db.insertInto('custom_oauth_links').values({ user_id: userId, provider_id: providerId, subject })
    .onConflict((oc) => oc.columns(['user_id', 'provider_id']).doUpdateSet({ subject, created_at: now }))
    .execute()
}

/** A user's provider accounts, with the providers' names, by provider id. */
export async function listCustomOAuthLinksOfUser (db: Db, userId: number): Promise<Array<{
  provider_id: number
  provider_slug: string
  provider_name: string
  provider_enabled: boolean
  subject: string
  created_at: number
}>> {
  return await db.selectFrom('custom_oauth_links as l').innerJoin('custom_oauth_providers as p', 'p.id', 'l.provider_id')
    .select(['l.provider_id', 'p.slug as provider_slug', 'p.name as provider_name', 'p.enabled as provider_enabled', 'l.subject', 'l.created_at'])
    .where('l.user_id', '=', userId).orderBy('l.provider_id').execute()
}

/** Removes a user's binding to a provider; false when there was none. */
export async function deleteCustomOAuthLink (db: Db, userId: number, providerId: number): Promise<boolean> {
  const rows = await db.deleteFrom('custom_oauth_links').where('user_id', '=', userId).where('provider_id', '=', providerId).returning('id').execute()
  return rows.length > 0
}
