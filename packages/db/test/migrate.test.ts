import { createTestDatabase } from '@modelgate/testing'
import t from 'tap'
import {
  createDb,
  ensureLogPartitions,
  insertRootUserIfNone,
  listLogPartitions,
  migrateToLatest,
  migrationNames,
  pendingMigrations,
  sql
} from '../src/index.js'

async function schemaSnapshot (url: string): Promise<string> {
  const db = createDb(url, { max: 1 })
  try {
    const cols = await sql<{ r: string }>`
      select table_name || '.' || column_name || ':' || data_type || ':' || coalesce(column_default, '') || ':' || is_nullable as r
      from information_schema.columns where table_schema = 'public' order by 1`.execute(db)
    const idx = await sql<{ r: string }>`select indexdef as r from pg_indexes where schemaname = 'public' order by 1`.execute(db)
    const mig = await sql<{ r: string }>`select name as r from kysely_migration order by 1`.execute(db)
    return JSON.stringify([cols.rows, idx.rows, mig.rows])
  } finally {
    await db.destroy()
  }
}

t.test('applying migrations twice changes nothing', async (t) => {
  const url = await createTestDatabase(t)
  const db = createDb(url)
  t.teardown(() => db.destroy())
  t.same(await pendingMigrations(db), migrationNames)
  const first = await migrateToLatest(db)
  t.same(first.applied, migrationNames, 'first run applies every migration in order')
  const before = await schemaSnapshot(url)
  const second = await migrateToLatest(db)
  t.same(second.applied, [], 'second run applies nothing')
  t.equal(await schemaSnapshot(url), before, 'schema is identical after the second run')
  t.same(await pendingMigrations(db), [])
})

t.test('a rollback: an older release starts on a database a newer release migrated; a database missing migrations it knows and having unknown ones is refused', async (t) => {
  const url = await createTestDatabase(t)
  const db = createDb(url)
  t.teardown(() => db.destroy())
  await migrateToLatest(db)
  // What a newer release would leave behind: a migration this build does not know.
  await sql`insert into kysely_migration (name, timestamp) values ('2099_01_01_000000_from_a_newer_release', now()::text)`.execute(db)
  const outcome = await migrateToLatest(db)
  t.same(outcome, { applied: [], newer: ['2099_01_01_000000_from_a_newer_release'] }, 'starts, and says the database is newer')
  const last = migrationNames.at(-1)!
  await sql`delete from kysely_migration where name = ${last}`.execute(db)
  await t.rejects(migrateToLatest(db), /does not know .*2099_01_01_000000_from_a_newer_release.* lacks some it knows .*/, 'unknown and missing at once: refused with both lists')
})

t.test('several replicas migrating at once do not conflict', async (t) => {
  const url = await createTestDatabase(t)
  const replicas = Array.from({ length: 4 }, () => createDb(url, { max: 2 }))
  t.teardown(() => Promise.all(replicas.map((d) => d.destroy())))
  const outcomes = await Promise.all(replicas.map((d) => migrateToLatest(d)))
  const applied = outcomes.flatMap((o) => o.applied)
  t.same(applied.sort(), [...migrationNames].sort(), 'each migration applied exactly once across replicas')
  const db = replicas[0]!
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db)
  t.equal(rows[0]?.n, migrationNames.length)
})

t.test('schema holds every entity with 64-bit quota columns', async (t) => {
  const url = await createTestDatabase(t)
  const db = createDb(url)
  t.teardown(() => db.destroy())
  await migrateToLatest(db)
  const tables = await sql<{ t: string }>`
    select table_name as t from information_schema.tables
    where table_schema = 'public' and table_name not like 'logs\\_%' and table_name not like 'audit\\_logs\\_%' and table_name not like 'kysely%' order by 1`.execute(db)
  t.same(tables.rows.map((r) => r.t), [
    'abilities', 'audit_logs', 'channels', 'checkins', 'creem_events', 'custom_oauth_links', 'custom_oauth_providers', 'logs', 'midjourneys', 'options', 'passkeys', 'quota_data', 'redemptions', 'settlements', 'stripe_events', 'subscription_orders', 'subscription_plan_items', 'subscription_plans', 'tasks', 'tokens', 'top_ups', 'two_factor_auth', 'two_factor_backup_codes', 'user_sessions', 'user_subscription_items', 'user_subscriptions', 'users'
  ])
  const quotaCols = await sql<{ c: string, d: string }>`
    select table_name || '.' || column_name as c, data_type as d from information_schema.columns
    where table_schema = 'public' and (column_name like '%quota%' or column_name like 'amount\\_%') and table_name not like 'logs\\_%' order by 1`.execute(db)
  for (const col of quotaCols.rows) {
    // A flag and a kind, not amounts.
    if (col.c === 'tokens.unlimited_quota' || col.c.endsWith('.quota_type')) continue
    t.equal(col.d, 'bigint', `${col.c} is bigint`)
  }

  // A quota past 2^32 round-trips exactly as a number.
  const big = 2 ** 40 + 7
  const user = await db.insertInto('users').values({ username: 'big', quota: big, access_token_hash: null, aff_code: null, deleted_at: null, setting: {} })
    .returningAll().executeTakeFirstOrThrow()
  t.equal(user.quota, big)
  t.equal(typeof user.quota, 'number')
  await t.rejects(
    db.updateTable('users').set({ aff_quota: -1 }).where('id', '=', user.id).execute(),
    /users_aff_quota_nonnegative/,
    'a negative affiliate balance is refused by the database'
  )

  // Soft delete: a deregistered name can be registered again, a live one cannot.
  await t.rejects(db.insertInto('users').values({ username: 'big', access_token_hash: null, aff_code: null, deleted_at: null, setting: {} }).execute(), /users_username_live/)
  await db.updateTable('users').set({ deleted_at: 1 }).where('id', '=', user.id).execute()
  await db.insertInto('users').values({ username: 'big', access_token_hash: null, aff_code: null, deleted_at: null, setting: {} }).execute()

  // Abilities follow their channel.
  const ch = await db.insertInto('channels').values({ key: 'sk-upstream', openai_organization: null, tag: null, other_info: {} }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('abilities').values([
    { group: 'default', model: 'gpt-4o', channel_id: ch.id, tag: null },
    { group: 'vip', model: 'gpt-4o', channel_id: ch.id, tag: null }
  ]).execute()
  await db.deleteFrom('channels').where('id', '=', ch.id).execute()
  const left = await db.selectFrom('abilities').select('channel_id').execute()
  t.same(left, [], 'deleting a channel removes its abilities')
})

t.test('root user is created once, even when replicas race', async (t) => {
  const url = await createTestDatabase(t)
  const db = createDb(url, { max: 8 })
  t.teardown(() => db.destroy())
  await migrateToLatest(db)
  const results = await Promise.all(Array.from({ length: 8 }, () =>
    insertRootUserIfNone(db, { username: 'root', passwordHash: 'h', quota: 100 })))
  t.equal(results.filter((r) => r !== undefined).length, 1, 'exactly one insert wins')
  const users = await db.selectFrom('users').select(['username', 'role']).execute()
  t.same(users, [{ username: 'root', role: 100 }])
  t.equal(await insertRootUserIfNone(db, { username: 'root', passwordHash: 'h', quota: 100 }), undefined)
})

t.test('logs are partitioned by month and rows outside known months are kept', async (t) => {
  const url = await createTestDatabase(t)
  const db = createDb(url)
  t.teardown(() => db.destroy())
  await migrateToLatest(db)
  const now = new Date()
  const month = (d: Date) => `logs_${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`
  const names = (await listLogPartitions(db)).map((p) => p.name)
  t.ok(names.includes(month(now)), 'current month partition exists after migrating')
  t.equal(names.at(-1), 'logs_default')

  // A row far in the future lands in the default partition, then moves when its month is created.
  const future = new Date(Date.UTC(2031, 4, 17, 12))
  const ts = Math.floor(future.getTime() / 1000)
  await db.insertInto('logs').values({ created_at: ts, user_id: 7, quota: 123, request_id: 'req-1' }).execute()
  const inDefault = await sql<{ n: number }>`select count(*)::int as n from logs_default`.execute(db)
  t.equal(inDefault.rows[0]?.n, 1)
  t.equal(await ensureLogPartitions(db, future, 0), 2, 'creates the month before and the month itself')
  const moved = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(month(future))}`.execute(db)
  t.equal(moved.rows[0]?.n, 1, 'the row moved out of the default partition')
  t.equal(await ensureLogPartitions(db, future, 0), 0, 'calling again creates nothing')

  // The settlement key refuses a second row for the same request.
  await t.rejects(db.insertInto('logs').values({ created_at: ts, user_id: 7, quota: 123, request_id: 'req-1' }).execute(), /logs_request|duplicate key/)

  // A time-range query reads one partition only.
  const plan = await sql<{ 'QUERY PLAN': string }>`
    explain select * from logs where user_id = 7 and created_at >= ${ts - 60} and created_at < ${ts + 60}`.execute(db)
  const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n')
  t.match(text, month(future))
  t.notMatch(text, month(now), 'other months are pruned')
  t.notMatch(text, 'logs_default')
})
