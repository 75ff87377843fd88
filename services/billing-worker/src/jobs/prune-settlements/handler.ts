import { type Database, type Kysely, pruneSettlements } from '@modelgate/db'
import { pruneSettlementsJob } from './definition.js'

export async function run (deps: { db: Kysely<Database>, now?: () => number }): Promise<{ removed: number }> {
  const now = deps.now?.() ?? Math.floor(Date.now() / 1000)
  return { removed: await pruneSettlements(deps.db, now - pruneSettlementsJob.keepSeconds) }
}
