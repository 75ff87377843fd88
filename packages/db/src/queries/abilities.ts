import { CHANNEL_STATUS } from '@modelgate/contracts'
import type { Kysely, Transaction } from 'kysely'
import { sql } from 'kysely'
import type { Database } from '../schema/index.js'

/** Every model an enabled channel serves, with the groups that reach it (sorted). */
export async function findServedModels (db: Kysely<Database> | Transaction<Database>): Promise<Array<{ model: string, groups: string[] }>> {
  const rows = await db.selectFrom('abilities')
    .innerJoin('channels', 'channels.id', 'abilities.channel_id')
    .select(['abilities.model as model', sql<string[]>`array_agg(distinct abilities."group" order by abilities."group")`.as('groups')])
    .where('abilities.enabled', '=', true).where('channels.status', '=', CHANNEL_STATUS.enabled)
    .groupBy('abilities.model').orderBy('abilities.model')
    .execute()
  return rows
}
