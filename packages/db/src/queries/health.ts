import { type Kysely, sql } from 'kysely'

/** Round-trips one query; throws when Postgres is unreachable. */
export async function pingDb (db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db)
}
