#!/usr/bin/env node
// `npm run migrate [-- status | --help]`: applies pending migrations to DATABASE_URL (or lists
// applied and pending ones) and exits.
import { loadMigrateConfig } from '@modelgate/config'
import { createDb } from './client.js'
import { migrateToLatest, migrationStatus } from './migrate.js'

const USAGE = `Usage: npm run migrate [-- <command>]

Commands:
  up (default)   apply every pending migration to DATABASE_URL and exit; safe while services
                 run or start (replicas queue on a Postgres advisory lock)
  status         list applied migrations (with when they ran) and pending ones; changes nothing
  help           print this help (also -h, --help)

Reads DATABASE_URL (a postgres:// URL). Use a direct Postgres connection, not one through
PgBouncer in transaction mode: the migration lock is held by the session.
Exit code: 0 on success (also when migrations are pending for status), 1 on an error
(configuration, connection, a failed migration), 2 on an unknown command.
`

const args = process.argv.slice(2)
const command = args.find((a) => !a.startsWith('-')) ?? 'up'
if (args.includes('--help') || args.includes('-h') || command === 'help') {
  process.stdout.write(USAGE)
  process.exit(0)
}
const unknownFlag = args.find((a) => a.startsWith('-'))
if ((command !== 'up' && command !== 'status') || unknownFlag !== undefined || args.length > 1) {
  process.stderr.write(`migrate: unknown ${unknownFlag !== undefined ? 'option' : 'command'} ${unknownFlag ?? (command !== 'up' && command !== 'status' ? command : args[1])}\n\n${USAGE}`)
  process.exit(2)
}

try {
  const config = loadMigrateConfig()
  const db = createDb(config.DATABASE_URL, { max: 2, applicationName: 'modelgate-migrate' })
  try {
    if (command === 'status') {
      const { applied, pending, unknown } = await migrationStatus(db)
      console.log(`applied (${applied.length}):`)
      for (const m of applied) console.log(`  ${m.name}  ${m.executedAt.toISOString()}`)
      console.log(`pending (${pending.length}):`)
      for (const name of pending) console.log(`  ${name}`)
      if (unknown.length > 0) {
        console.log(`applied but unknown to this build, from a newer release (${unknown.length}):`)
        for (const name of unknown) console.log(`  ${name}`)
      }
      console.log(pending.length === 0 ? 'database schema is up to date' : `${pending.length} migration(s) pending: run npm run migrate`)
    } else {
      const { applied, newer } = await migrateToLatest(db)
      console.log(applied.length === 0 ? 'database schema is up to date' : `applied ${applied.length} migration(s):\n  ${applied.join('\n  ')}`)
      if (newer.length > 0) console.log(`the database also has ${newer.length} migration(s) of a newer release: ${newer.join(', ')}`)
    }
  } finally {
    await db.destroy()
  }
} catch (err) {
  console.error(`migrate: ${(err as Error).message}`)
  process.exitCode = 1
}
