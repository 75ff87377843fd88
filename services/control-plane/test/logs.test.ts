import { ROLES } from '@modelgate/contracts'
import { ensureLogPartitions, type NewLog, softDeleteUser } from '@modelgate/db'
import t from 'tap'
import { build, login, ROOT, userSession } from './helpers.js'

interface Row {
  id: number
  created_at: number
  type: number
  user_id: number
  username: string
  token_name: string
  model_name: string
  channel_id: number
  quota: number
  prompt_tokens: number
  completion_tokens: number
}

const now = Math.floor(Date.now() / 1000)
const today = new Date()
/** First second of the UTC month `k` months from now. */
const month = (k: number) => Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + k, 1) / 1000
const partitionOf = (k: number) => {
  const d = new Date(month(k) * 1000)
  return `logs_${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`
}
const DAY = 86_400
const ids = (items: Array<{ id: number }>) => items.map((i) => i.id)

t.test('logs and dashboard', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  const carol = await userSession(app, 'carol')
  const adm = await userSession(app, 'adm', ROLES.admin)
  // Months -5 to -2 get partitions; -1 to +2 exist from the migration; 2001 lands in the default one.
  await ensureLogPartitions(app.db, new Date(month(-4) * 1000))
  await app.db.deleteFrom('logs').execute()

  const other = (channel: number) => ({ model_ratio: 15, completion_ratio: 4, group_ratio: 1, frt: 300, admin_info: { use_channel: [9, channel] } })
  const seed: Array<Omit<NewLog, 'id'> & { created_at: number }> = []
  const add = (user: { user: { id: number, username: string } }, created_at: number, f: Partial<NewLog> = {}) =>
    seed.push({ created_at, type: 2, user_id: user.user.id, username: user.user.username, token_name: 'tok-a', model_name: 'gpt-4o', channel_id: 1, quota: 100, prompt_tokens: 10, completion_tokens: 5, ip: '10.0.0.1', other: JSON.stringify(other(Number(f.channel_id ?? 1))), ...f })
  add(alice, now - 10, { quota: 150, prompt_tokens: 40, completion_tokens: 2 })
  add(alice, now - 30, { model_name: 'claude-3', channel_id: 2, quota: 70, prompt_tokens: 7, completion_tokens: 8 })
  add(alice, now - 3600, { token_name: 'tok-b', quota: 1000 })
  add(alice, now - 50, { type: 3, quota: 5000, content: 'admin changed the quota' })
  add(alice, now - 40, { type: 5, quota: 0, content: 'upstream failed' })
  // Older than the 3 days a normal user sees of their own logs; admins see it.
  add(alice, now - 4 * DAY, { quota: 21, token_name: 'tok-old' })
  add(adm, now - 5 * DAY, { quota: 22, token_name: 'adm-old' })
  add(alice, month(-2) + 2 * DAY, { quota: 11 })
  add(alice, month(-2) + 20 * DAY, { quota: 12, model_name: 'claude-3' })
  add(alice, month(-3) + 5 * DAY, { quota: 13 })
  add(alice, month(-5) + 5 * DAY, { quota: 14, token_name: 'tok-b' })
  add(alice, 978_307_200, { quota: 15 })
  add(bob, now - 5, { token_name: 'bob-key', channel_id: 3, quota: 300, prompt_tokens: 100, completion_tokens: 50 })
  add(bob, month(-3) + 7 * DAY, { token_name: 'bob-key', channel_id: 3, quota: 17 })
  add(bob, month(-4) + 1 * DAY, { token_name: 'bob-key', channel_id: 3, quota: 18, type: 1 })
  add(carol, now - 7200, { quota: 19, model_name: 'claude-3' })
  // The same second as alice's tok-b row: the later row (higher id) comes first.
  add(bob, now - 3600, { token_name: 'bob-key', channel_id: 3, quota: 20 })
  const inserted = await app.db.insertInto('logs').values(seed).returning(['id']).execute()
  const rows: Row[] = seed.map((s, i) => ({
    id: inserted[i]!.id,
    created_at: s.created_at,
    type: Number(s.type),
    user_id: Number(s.user_id),
    username: String(s.username),
    token_name: String(s.token_name),
    model_name: String(s.model_name),
    channel_id: Number(s.channel_id),
    quota: Number(s.quota),
    prompt_tokens: Number(s.prompt_tokens),
    completion_tokens: Number(s.completion_tokens)
  }))
  const newestFirst = (rs: Row[]) => [...rs].sort((a, b) => b.created_at - a.created_at || b.id - a.id).map((r) => r.id)
  const get = async (url: string, headers: Record<string, string>) => (await app.inject({ url, headers })).json()

  await t.test('admins page through all logs newest first, and every filter narrows them', async (t) => {
    const all = await get('/api/log/?p=1&page_size=100', root.headers)
    t.equal(all.data.total, rows.length)
    t.same(ids(all.data.items), newestFirst(rows), 'newest first')
    t.match(all.data.items[0], { channel_id: 3, ip: '10.0.0.1', other: { model_ratio: 15, admin_info: { use_channel: [9, 3] } } }, 'every column, other as JSON')
    const page2 = await get('/api/log/?p=2&page_size=4', root.headers)
    t.same(page2.data, { items: page2.data.items, page: 2, page_size: 4, total: rows.length })
    t.same(ids(page2.data.items), newestFirst(rows).slice(4, 8), 'second page of four')
    t.equal((await get('/api/log/', root.headers)).data.page_size, 20, 'page size defaults to 20')
    t.equal((await get('/api/log/?page_size=101', root.headers)).data.page_size, 100, 'page size at most 100')

    const cases: Array<[string, (r: Row) => boolean]> = [
      ['type=3', (r) => r.type === 3],
      ['username=alice', (r) => r.user_id === alice.user.id],
      ['token_name=bob-key', (r) => r.token_name === 'bob-key'],
      ['model_name=claude-3', (r) => r.model_name === 'claude-3'],
      ['channel=3', (r) => r.channel_id === 3],
      [`start_timestamp=${month(-3)}&end_timestamp=${month(-2) + 10 * DAY}`, (r) => r.created_at >= month(-3) && r.created_at < month(-2) + 10 * DAY],
      [`username=alice&model_name=gpt-4o&type=2&start_timestamp=${month(-2)}`, (r) => r.user_id === alice.user.id && r.model_name === 'gpt-4o' && r.type === 2 && r.created_at >= month(-2)],
      ['type=0&channel=&username=&token_name=&start_timestamp=', () => true],
      ['username=nobody', () => false]
    ]
    for (const [query, match] of cases) {
      const res = await get(`/api/log/?page_size=100&${query}`, root.headers)
      t.same(ids(res.data.items), newestFirst(rows.filter(match)), query)
      t.equal(res.data.total, rows.filter(match).length, `${query}: total`)
    }

    await softDeleteUser(app.db, carol.user.id)
    const deleted = await get('/api/log/?username=carol', root.headers)
    t.same(ids(deleted.data.items), newestFirst(rows.filter((r) => r.user_id === carol.user.id)), 'a deleted user\'s logs are still found by username')
  })

  // A normal user's own logs reach back 3 days.
  const recentOwn = (userId: number) => rows.filter((r) => r.user_id === userId && r.created_at >= now - 3 * DAY)

  await t.test('a user sees only their own logs, without admin-only fields', async (t) => {
    const own = recentOwn(alice.user.id)
    const res = await get('/api/log/self/?page_size=100&username=bob&channel=3', alice.headers)
    t.equal(res.success, true)
    t.same(ids(res.data.items), newestFirst(own), 'username and channel filters are ignored')
    t.equal(res.data.total, own.length)
    for (const item of res.data.items) {
      t.notOk('channel_id' in item, 'no channel')
      t.notOk('admin_info' in item.other, 'no admin_info')
    }
    t.match(res.data.items[0], { user_id: alice.user.id, ip: '10.0.0.1', other: { model_ratio: 15, frt: 300 } })
    const filtered = await get('/api/log/self?model_name=claude-3&page_size=100', alice.headers)
    t.same(ids(filtered.data.items), newestFirst(own.filter((r) => r.model_name === 'claude-3')), 'filters apply within own rows')
    const bobs = await get('/api/log/self/?page_size=100', bob.headers)
    t.same(ids(bobs.data.items), newestFirst(recentOwn(bob.user.id)))
    const refused = await app.inject({ url: '/api/log/', headers: alice.headers })
    t.equal(refused.statusCode, 403, 'a normal user cannot read everyone\'s logs')
  })

  await t.test('a normal user\'s own logs reach back 3 days, whatever the query; admins see every day', async (t) => {
    const old = rows.find((r) => r.token_name === 'tok-old')!
    const asked = `start_timestamp=${now - 400 * DAY}&page_size=100`
    const self = await get(`/api/log/self/?${asked}`, alice.headers)
    t.notOk(ids(self.data.items).includes(old.id), 'a 4-day-old row is not returned to its owner')
    t.same(ids(self.data.items), newestFirst(recentOwn(alice.user.id)), 'the last 3 days, even when an earlier start is asked')
    t.equal((await get('/api/log/self/?token_name=tok-old', alice.headers)).data.total, 0, 'not found by filters either')
    t.same((await get(`/api/log/self/stat?token_name=tok-old&start_timestamp=${now - 5 * DAY}`, alice.headers)).data, { quota: 0, rpm: 0, tpm: 0 }, 'nor counted in the stat')
    const admin = await get(`/api/log/?username=alice&${asked}`, root.headers)
    t.ok(ids(admin.data.items).includes(old.id), 'an admin sees it in all logs')
    t.same(ids(admin.data.items), newestFirst(rows.filter((r) => r.user_id === alice.user.id && r.created_at >= now - 400 * DAY)))
    t.same(ids((await get('/api/log/?token_name=tok-old', root.headers)).data.items), [old.id])
    t.equal((await get('/api/log/stat?token_name=tok-old', root.headers)).data.quota, 21, 'and in the stat')
    const admOwn = await get('/api/log/self/', adm.headers)
    t.same(ids(admOwn.data.items), newestFirst(rows.filter((r) => r.user_id === adm.user.id)), 'an admin\'s own logs are not limited')
    t.equal(admOwn.data.total, 1)
  })

  await t.test('stat sums consume quota and counts the last minute', async (t) => {
    const expect = (rs: Row[]) => {
      const consume = rs.filter((r) => r.type === 2)
      const recent = consume.filter((r) => r.created_at >= now - 60)
      return {
        quota: consume.reduce((s, r) => s + r.quota, 0),
        rpm: recent.length,
        tpm: recent.reduce((s, r) => s + r.prompt_tokens + r.completion_tokens, 0)
      }
    }
    const all = expect(rows)
    t.same((await get('/api/log/stat', root.headers)).data, all)
    t.ok(all.rpm === 3 && all.tpm > 0 && all.quota > 0, 'the fixture has recent and older consume rows')
    t.same((await get('/api/log/stat?username=bob', root.headers)).data, expect(rows.filter((r) => r.user_id === bob.user.id)))
    t.same((await get('/api/log/stat?channel=2', root.headers)).data, expect(rows.filter((r) => r.channel_id === 2)))
    const own = recentOwn(alice.user.id)
    t.same((await get('/api/log/self/stat', alice.headers)).data, expect(own))
    t.same((await get('/api/log/self/stat?token_name=tok-b', alice.headers)).data, expect(own.filter((r) => r.token_name === 'tok-b')))
    t.same((await get(`/api/log/self/stat?start_timestamp=${now - 20}`, alice.headers)).data, expect(own.filter((r) => r.created_at >= now - 20)))
  })

  await t.test('dashboard buckets quota_data by hour, day and week', async (t) => {
    const monday = Date.UTC(2026, 0, 5) / 1000
    const data = [
      { user_id: alice.user.id, username: 'alice', model_name: 'gpt-4o', created_at: monday + 3600, count: 2, quota: 100, token_used: 30 },
      { user_id: alice.user.id, username: 'alice', model_name: 'gpt-4o', created_at: monday + 2 * 3600, count: 1, quota: 50, token_used: 10 },
      { user_id: alice.user.id, username: 'alice', model_name: 'claude-3', created_at: monday + 26 * 3600, count: 3, quota: 70, token_used: 21 },
      { user_id: alice.user.id, username: 'alice', model_name: 'gpt-4o', created_at: monday + 8 * DAY + 3 * 3600, count: 4, quota: 400, token_used: 44 },
      { user_id: bob.user.id, username: 'bob', model_name: 'gpt-4o', created_at: monday + 3600, count: 5, quota: 500, token_used: 55 },
      { user_id: bob.user.id, username: 'bob', model_name: 'gpt-4o', created_at: monday - 3600, count: 9, quota: 900, token_used: 99 }
    ]
    await app.db.insertInto('quota_data').values(data).execute()
    const range = `start_timestamp=${monday}&end_timestamp=${monday + 14 * DAY}`
    const bucketOf = { hour: (s: number) => s, day: (s: number) => s - (s % DAY), week: (s: number) => s - ((s - 4 * DAY) % (7 * DAY)) }
    const expect = (granularity: keyof typeof bucketOf, userId?: number) => {
      const out = new Map<string, { created_at: number, model_name: string, count: number, quota: number, token_used: number }>()
      for (const d of data) {
        if (d.created_at < monday || (userId !== undefined && d.user_id !== userId)) continue
        const created_at = bucketOf[granularity](d.created_at)
        const b = out.get(`${created_at}/${d.model_name}`) ?? { created_at, model_name: d.model_name, count: 0, quota: 0, token_used: 0 }
        b.count += d.count
        b.quota += d.quota
        b.token_used += d.token_used
        out.set(`${created_at}/${d.model_name}`, b)
      }
      return [...out.values()].sort((a, b) => a.created_at - b.created_at || a.model_name.localeCompare(b.model_name))
    }
    for (const g of ['hour', 'day', 'week'] as const) {
      t.same((await get(`/api/data/?${range}&granularity=${g}`, root.headers)).data, expect(g), `all users by ${g}`)
      t.same((await get(`/api/data/self/?${range}&granularity=${g}`, alice.headers)).data, expect(g, alice.user.id), `own usage by ${g}`)
    }
    t.same((await get(`/api/data/?${range}&granularity=week&username=bob`, root.headers)).data, expect('week', bob.user.id), 'one user by username')
    t.equal(expect('week').reduce((s, b) => s + b.quota, 0), 1120, 'weeks sum every bucket in range')
    t.same((await get('/api/data/self/', alice.headers)).data, [], 'defaults to the last 7 days')
    const tooLong = await get(`/api/data/self/?start_timestamp=${now - 367 * DAY}&end_timestamp=${now}`, { ...alice.headers, 'accept-language': 'en' })
    t.same(tooLong, { success: false, message: 'The time range may span at most 366 days' })
    await app.saveOptions({ DataExportEnabled: 'false' })
    const off = await get('/api/data/self/', { ...alice.headers, 'accept-language': 'en' })
    t.same(off, { success: false, message: 'Data export (the usage dashboard) is disabled by the administrator' })
    t.equal((await get('/api/data/', root.headers)).success, false, 'also for admins')
    await app.saveOptions({ DataExportEnabled: 'true' })
  })

  await t.test('clearing history empties old months, trims the partial one and keeps newer rows', async (t) => {
    const target = month(-2) + 10 * DAY
    const count = async (table: string) => Number((await app.db.selectFrom(table as 'logs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
    t.equal(await count(partitionOf(-3)), 2, 'month -3 holds rows before the clear')
    t.equal(await count('logs_default'), 1, 'the default partition holds the 2001 row')
    const res = await app.inject({ method: 'DELETE', url: `/api/log/?target_timestamp=${target}`, headers: { ...root.headers, 'accept-language': 'en' } })
    const expected = rows.filter((r) => r.created_at < target).length
    t.same(res.json(), { success: true, message: `${expected} logs cleared`, data: expected })
    for (const k of [-5, -4, -3]) t.equal(await count(partitionOf(k)), 0, `${partitionOf(k)} emptied`)
    t.equal(await count('logs_default'), 0, 'old rows in the default partition deleted')
    const left = await app.db.selectFrom('logs').select('id').orderBy('id').execute()
    t.same(left.map((r) => r.id), rows.filter((r) => r.created_at >= target).map((r) => r.id).sort((a, b) => a - b), 'newer rows, including the later half of the partial month, remain')
    const again = await app.inject({ method: 'DELETE', url: `/api/log/?target_timestamp=${target}`, headers: { ...root.headers, 'accept-language': 'zh' } })
    t.same(again.json(), { success: true, message: '已清理 0 条日志', data: 0 })
    const admin = await login(app, 'adm', 'password123')
    t.equal((await app.inject({ method: 'DELETE', url: `/api/log/?target_timestamp=${target}`, headers: admin.headers })).statusCode, 403, 'only the super admin clears history')
  })
})
