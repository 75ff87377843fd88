import { type Kysely, type MigrationResult, Migrator, sql } from 'kysely'
import { migrations } from './migrations/index.js'

/**
 * Key of the session-level advisory lock migrations run under: any fixed 64-bit number shared by
 * every replica; ours spells "mgmigrat".
 */
export const MIGRATION_LOCK_KEY = 0x6d676d6967726174n

const provider = { getMigrations: async () => ({ ...migrations }) }

function migrator (db: Kysely<any>): Migrator {
  return new Migrator({ db, provider })
}

/** Outcome of {@link migrateToLatest}. */
export interface MigrateOutcome {
  /** Names applied by this call, in order; empty when the schema was already current. */
  applied: string[]
  /**
   * Applied migrations this build does not know: a newer release migrated the database, and this
   * (older) one is running against it, as in a rollback. Migrations are additive, so it starts.
   */
  newer: string[]
}

/**
 * Applies every pending migration. Safe when several replicas start at once: a session-level
 * advisory lock makes them queue, and each later one finds nothing left to do.
 */
export async function migrateToLatest (db: Kysely<any>): Promise<MigrateOutcome> {
  return await db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn)
    try {
      // A rollback: the database is ahead of this build. Kysely would refuse it as corrupted; an
      // older release runs on a newer (additive) schema as long as it has every migration it knows.
      const status = await migrationStatus(db)
      if (status.unknown.length > 0) {
        if (status.pending.length > 0) {
          throw new Error(`the database has migrations this build does not know (${status.unknown.join(', ')}) and lacks some it knows (${status.pending.join(', ')}): run the release that made them`)
        }
        return { applied: [], newer: status.unknown }
      }
      const { error, results } = await migrator(db).migrateToLatest()
      if (error !== undefined) {
        const failed = results?.find((r: MigrationResult) => r.status === 'Error')
        throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String((error as Error).message ?? error)}`, { cause: error })
      }
      return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName), newer: [] }
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

/** What {@link migrationStatus} reports. */
export interface MigrationStatus {
  /** Applied migrations this build knows, oldest first, with when they ran. */
  applied: Array<{ name: string, executedAt: Date }>
  /** Migrations of this build the database has not applied yet, in the order they would run. */
  pending: string[]
  /** Applied migrations this build does not know (a newer release migrated this database). */
  unknown: string[]
}

/** Applied and pending migrations; reads only (no lock, nothing created). */
export async function migrationStatus (db: Kysely<any>): Promise<MigrationStatus> {
  const all = await migrator(db).getMigrations()
  const table = await sql<{ t: string | null }>`select to_regclass('kysely_migration')::text as t`.execute(db)
  const recorded = table.rows[0]?.t == null
    ? []
    : (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((r) => r.name)
  const known = new Set(all.map((m) => m.name))
  return {
    applied: all.flatMap((m) => m.executedAt === undefined ? [] : [{ name: m.name, executedAt: m.executedAt }]),
    pending: all.filter((m) => m.executedAt === undefined).map((m) => m.name),
    unknown: recorded.filter((name) => !known.has(name))
  }
}
