import { createMigratedDatabase } from '@modelgate/testing'
import t from 'tap'
import { countLogs, createDb, ensureLogPartitions, findLogs, type LogFilter, type NewLog, sql } from '../../src/index.js'

const now = new Date()
/** First second of the UTC month `k` months from now. */
const month = (k: number) => Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + k, 1) / 1000

t.test('pages are newest first across months, ties on created_at by id, with the exact total', async (t) => {
  const db = createDb(await createMigratedDatabase(t))
  t.teardown(() => db.destroy())
  const users = await db.insertInto('users')
    .values(['ann', 'ben'].map((username) => ({ username, access_token_hash: null, aff_code: null, deleted_at: null, setting: {} })))
    .returning(['id', 'username']).execute()
  const [ann, ben] = users as [{ id: number, username: string }, { id: number, username: string }]

  // The last second of last month and the first of this one, several rows each, inserted newest
  // second first so that ids do not follow created_at.
  const edge = month(0)
  const seconds = [edge + 40, edge, edge - 1, edge - 30]
  const seed: NewLog[] = []
  for (const [i, created_at] of seconds.entries()) {
    for (let j = 0; j < 6; j++) {
      const who = j % 3 === 2 ? ben : ann
      seed.push({ created_at, type: j === 5 ? 5 : 2, user_id: who.id, username: who.username, token_name: `tok-${j % 2}`, model_name: j % 2 === 0 ? 'gpt-4o' : 'o3', channel_id: 1 + ((i + j) % 3), request_id: `r-${i}-${j}` })
    }
  }
  const ids = await db.insertInto('logs').values(seed).returning(['id', 'created_at']).execute()
  const rows = seed.map((s, i) => ({ ...s, id: ids[i]!.id }))
  const parts = await sql<{ part: string, n: number }>`select tableoid::regclass::text as part, count(*)::int as n from logs group by 1 order by 1`.execute(db)
  t.equal(parts.rows.length, 2, 'the rows sit in two monthly partitions')

  const cases: Array<[string, LogFilter, (r: typeof rows[number]) => boolean]> = [
    ['no filter', {}, () => true],
    ['user', { userId: ann.id }, (r) => r.user_id === ann.id],
    ['username', { username: 'ben' }, (r) => r.user_id === ben.id],
    ['type', { type: 5 }, (r) => r.type === 5],
    ['token name', { tokenName: 'tok-1' }, (r) => r.token_name === 'tok-1'],
    ['model', { modelName: 'gpt-4o' }, (r) => r.model_name === 'gpt-4o'],
    ['channel', { channelId: 2 }, (r) => r.channel_id === 2],
    ['range across the month edge', { start: edge - 1, end: edge + 1 }, (r) => r.created_at >= edge - 1 && r.created_at < edge + 1],
    ['everything at once', { userId: ann.id, username: 'ann', type: 2, tokenName: 'tok-0', modelName: 'gpt-4o', channelId: 1, start: edge - 30, end: edge + 41 },
      (r) => r.user_id === ann.id && r.type === 2 && r.token_name === 'tok-0' && r.model_name === 'gpt-4o' && r.channel_id === 1],
    ['a user and another user\'s name', { userId: ann.id, username: 'ben' }, () => false]
  ]
  for (const [name, filter, match] of cases) {
    const expected = rows.filter(match).sort((a, b) => b.created_at - a.created_at || b.id - a.id).map((r) => r.id)
    const pages: number[] = []
    for (let offset = 0; offset <= expected.length; offset += 4) {
      pages.push(...(await findLogs(db, filter, { offset, limit: 4 })).map((r) => r.id))
    }
    t.same(pages, expected, `${name}: pages of four in order`)
    t.equal(await countLogs(db, filter), expected.length, `${name}: total`)
  }
  const whole = await findLogs(db, { userId: ben.id }, { offset: 0, limit: 1 })
  t.match(whole[0], { user_id: ben.id, username: 'ben', created_at: edge + 40, request_id: 'r-0-5', type: 5 }, 'a page holds whole rows')
})

t.test('a page of a busy filter is read from its index without sorting', async (t) => {
  const db = createDb(await createMigratedDatabase(t))
  t.teardown(() => db.destroy())
  const lo = month(-1)
  // 40 000 rows over two months, a tenth user 7's, plus a burst of 2 000 rows in one second.
  await sql`
    insert into logs (created_at, user_id, model_name, request_id)
    select ${lo}::bigint + g * 120, case when g % 10 = 0 then 7 else g % 500 end, 'm' || (g % 20), null from generate_series(1, 40000) g
  `.execute(db)
  await sql`insert into logs (created_at, user_id, model_name) select ${lo + 4_000_000}::bigint, 7, 'm0' from generate_series(1, 2000)`.execute(db)
  await sql`vacuum analyze logs`.execute(db)
  for (const [name, where] of [['user', sql`user_id = 7`], ['model', sql`model_name = 'm0'`], ['range only', sql`true`]] as const) {
    const plan = await sql<{ 'QUERY PLAN': string }>`
      explain select id, created_at from logs where ${where} and created_at >= ${lo} and created_at < ${month(1)}
      order by created_at desc, id desc limit 10`.execute(db)
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n')
    t.match(text, /Index Only Scan Backward/, `${name}: keys straight from the index`)
    t.notMatch(text, /Sort/, `${name}: no sort, not even of one second's rows`)
  }
})

t.test('log partitions are vacuumed after 10 000 inserts, also the months created later', async (t) => {
  const db = createDb(await createMigratedDatabase(t))
  t.teardown(() => db.destroy())
  await ensureLogPartitions(db, new Date(Date.UTC(2031, 4, 17)), 0)
  const { rows } = await sql<{ name: string, options: string[] | null }>`
    select c.relname as name, c.reloptions as options from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'logs'::regclass order by 1`.execute(db)
  t.ok(rows.some((r) => r.name === 'logs_203105'), 'a month created after the migration is included')
  for (const r of rows) {
    t.same([...(r.options ?? [])].sort(), ['autovacuum_vacuum_insert_scale_factor=0', 'autovacuum_vacuum_insert_threshold=10000'], r.name)
  }
})
