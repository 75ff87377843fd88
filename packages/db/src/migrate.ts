import { type Kysely, type MigrationResult, Migrator, sql } from 'kysely'
import { migrations } from './migrations/index.js'

// Any fixed 64-bit number shared by every replica; ours spells "mgmigrat".
const MIGRATION_LOCK_KEY = 0x6d676d6967726174n

const provider = { getMigrations: async () => ({ ...migrations }) }

function migrator (db: Kysely<any>): Migrator {
  return new Migrator({ db, provider })
}

/** Outcome of {@link migrateToLatest}. */
export interface MigrateOutcome {
  /** Names applied by this call, in order; empty when the schema was already current. */
  applied: string[]
}

/**
 * Applies every pending migration. Safe when several replicas start at once: a session-level
 * advisory lock makes them queue, and each later one finds nothing left to do.
 */
export async function migrateToLatest (db: Kysely<any>): Promise<MigrateOutcome> {
  return await db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn)
    try {
      const { error, results } = await migrator(db).migrateToLatest()
      if (error !== undefined) {
        const failed = results?.find((r: MigrationResult) => r.status === 'Error')
        throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String((error as Error).message ?? error)}`, { cause: error })
      }
      return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) }
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(conn)
    }
  })
}

/** Names of migrations known to this build that the database has not applied yet. */
export async function pendingMigrations (db: Kysely<any>): Promise<string[]> {
  const all = await migrator(db).getMigrations()
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name)
}

/** Names of every migration this build knows, in order. */
export const migrationNames: readonly string[] = Object.keys(migrations).sort()
