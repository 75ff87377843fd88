#!/usr/bin/env node
// `npm run migrate`: applies pending migrations to DATABASE_URL and exits.
import { loadMigrateConfig } from '@modelgate/config'
import { createDb } from './client.js'
import { migrateToLatest } from './migrate.js'

try {
  const config = loadMigrateConfig()
  const db = createDb(config.DATABASE_URL, { max: 2, applicationName: 'modelgate-migrate' })
  try {
    const { applied } = await migrateToLatest(db)
    console.log(applied.length === 0 ? 'database schema is up to date' : `applied ${applied.length} migration(s):\n  ${applied.join('\n  ')}`)
  } finally {
    await db.destroy()
  }
} catch (err) {
  console.error((err as Error).message)
  process.exitCode = 1
}
