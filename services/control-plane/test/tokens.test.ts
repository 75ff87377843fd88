import { setTimeout as sleep } from 'node:timers/promises'
import { configChannel, tokenCacheKey } from '@modelgate/contracts'
import { sql } from '@modelgate/db'
import { tokenKeyHash } from '@modelgate/service'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import t from 'tap'
import { build, type Session, sharedEnv, userSession } from './helpers.js'

const EN = { 'accept-language': 'en' }
const ZH = { 'accept-language': 'zh-CN' }
const KEY = /^sk-[A-Za-z0-9]{48}$/
const HINT = /^sk-[A-Za-z0-9]{4}\*{10}[A-Za-z0-9]{4}$/
const now = () => Math.floor(Date.now() / 1000)

interface Created { id: number, name: string, key: string, full_key: string, status: number, remain_quota: number }

async function call (app: FastifyInstance, s: Session, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, lang = EN) {
  const res = await app.inject({ method, url, headers: { ...s.headers, ...lang }, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, headers: res.headers, body: res.json(), text: res.body }
}

async function create (app: FastifyInstance, s: Session, payload: object): Promise<Created> {
  const res = await call(app, s, 'POST', '/api/token/', payload)
  if (res.body.success !== true) throw new Error(`create failed: ${res.body.message}`)
  return res.body.data
}

const stored = async (app: FastifyInstance, id: number) =>
  await app.db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow()

async function until (what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    await sleep(10)
  }
  throw new Error(`timed out waiting until ${what}`)
}

t.test('creates a token with the default quota and shows its full key only to its owner', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const res = await call(app, a, 'POST', '/api/token/', {
    name: '  my key  ',
    model_limits_enabled: true,
    model_limits: ' gpt-4o, gpt-4o ,,claude-3 ',
    allow_ips: '10.0.0.1\n\n192.168.0.0/16\r\n::1\n10.0.0.1\n2001:db8::/32'
  })
  t.equal(res.body.success, true)
  t.equal(res.headers['cache-control'], 'no-store', 'the answer with the full key is not cached')
  const tok = res.body.data
  t.notOk(Array.isArray(tok), 'a single token is answered as one object')
  t.match(tok, { name: 'my key', status: 1, remain_quota: 500000, unlimited_quota: false, expired_time: -1, group: '', user_id: a.user.id, used_quota: 0 })
  t.equal(tok.model_limits, 'gpt-4o,claude-3', 'model names trimmed, blanks and duplicates dropped')
  t.equal(tok.allow_ips, '10.0.0.1\n192.168.0.0/16\n::1\n2001:db8::/32', 'one entry per line, blanks and duplicates dropped')
  t.match(tok.full_key, KEY)
  t.match(tok.key, HINT)
  t.equal(tok.key, `${tok.full_key.slice(0, 7)}**********${tok.full_key.slice(-4)}`)
  t.notOk('key_hash' in tok || 'key_encrypted' in tok)

  const row = await stored(app, tok.id)
  t.equal(row.key_hash, tokenKeyHash(tok.full_key), 'looked up by the hash of the key body, as the gateway does')
  t.not(row.key_encrypted, tok.full_key)
  t.notOk(row.key_encrypted.includes(tok.full_key.slice(3)), 'the key is not stored in clear')
  t.equal(app.secrets.open(row.key_encrypted), tok.full_key, 'the sealed copy opens to the key')
  t.equal(row.key_hint, tok.key)

  const body = tok.full_key.slice(3)
  const list = await call(app, a, 'GET', '/api/token/?p=1&size=10')
  t.equal(list.body.data.total, 1)
  t.notOk(list.text.includes(body), 'the list never carries the full key')
  t.same(Object.keys(list.body.data.items[0]).sort(), [
    'accessed_time', 'allow_ips', 'concurrency_limit', 'created_time', 'expired_time', 'group', 'id', 'key', 'model_limits',
    'model_limits_enabled', 'name', 'remain_quota', 'rpm_limit', 'status', 'tpm_limit', 'unlimited_quota', 'used_quota', 'user_id'
  ])
  const one = await call(app, a, 'GET', `/api/token/${tok.id}`)
  t.equal(one.body.data.key, tok.key)
  t.notOk(one.text.includes(body), 'reading one token shows the masked key')
  const searched = await call(app, a, 'GET', `/api/token/search?token=${tok.full_key}`)
  t.notOk(searched.text.includes(body), 'a search by key does not echo the key')

  const reveal = await call(app, a, 'POST', `/api/token/${tok.id}/key`)
  t.same(reveal.body, { success: true, message: '', data: { key: tok.full_key } })
  t.equal(reveal.headers['cache-control'], 'no-store')
})

t.test('creates up to 100 tokens at once, extra ones named with a random suffix', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const res = await call(app, a, 'POST', '/api/token/', { name: 'batch', count: 3, remain_quota: 1000, unlimited_quota: true })
  const list = res.body.data as Created[]
  t.equal(list.length, 3, 'a batch is answered as a list')
  t.equal(list[0]!.name, 'batch', 'the first keeps the name')
  for (const tok of list.slice(1)) t.match(tok.name, /^batch-[A-Za-z0-9]{6}$/)
  t.equal(new Set(list.map((x) => x.full_key)).size, 3, 'every token has its own key')
  for (const tok of list) {
    t.match(tok, { remain_quota: 1000, unlimited_quota: true, status: 1 })
    t.equal((await stored(app, tok.id)).key_hash, tokenKeyHash(tok.full_key), 'each full key belongs to its own token')
  }

  for (const count of [0, 101, -1]) {
    const refused = await call(app, a, 'POST', '/api/token/', { name: 'nope', count })
    t.same(refused.body, { success: false, message: 'The batch count must be an integer from 1 to 100' }, `count ${count} refused`)
  }
  const hundred = await call(app, a, 'POST', '/api/token/', { name: 'h', count: 100 })
  t.equal(hundred.body.data.length, 100)
  const total = await app.db.selectFrom('tokens').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', a.user.id).executeTakeFirstOrThrow()
  t.equal(Number(total.n), 103, 'refused batches created nothing')
})

t.test('a user holds at most 1000 live tokens', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  await sql`insert into tokens (user_id, name, key_hash, key_encrypted)
    select ${a.user.id}, 'seed', md5(g::text), 'x' from generate_series(1, 998) g`.execute(app.db)
  const over = await call(app, a, 'POST', '/api/token/', { name: 'two', count: 3 })
  t.same(over.body, { success: false, message: 'You can hold at most 1000 tokens; delete some before creating more' })
  t.equal((await call(app, a, 'POST', '/api/token/', { name: 'two', count: 2 })).body.data.length, 2, 'up to the limit is fine')
  const seed = await app.db.selectFrom('tokens').select('id').where('name', '=', 'seed').executeTakeFirstOrThrow()
  t.equal((await call(app, a, 'DELETE', `/api/token/${seed.id}/`)).body.success, true)
  t.equal((await call(app, a, 'POST', '/api/token/', { name: 'again' })).body.success, true, 'deleted tokens do not count')
})

t.test('a user cannot see or touch another user\'s tokens', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const b = await userSession(app, 'bob')
  const mine = await create(app, a, { name: 'shared-name' })
  const theirs = await create(app, b, { name: 'shared-name', remain_quota: 700 })
  const missing = 999_999

  const attempts: Array<[string, 'GET' | 'POST' | 'PUT' | 'DELETE', (id: number) => string, (id: number) => object | undefined]> = [
    ['read', 'GET', (id) => `/api/token/${id}`, () => undefined],
    ['reveal', 'POST', (id) => `/api/token/${id}/key`, () => undefined],
    ['update', 'PUT', () => '/api/token/', (id) => ({ id, name: 'stolen', remain_quota: 1 })],
    ['status', 'PUT', () => '/api/token/?status_only=true', (id) => ({ id, status: 2 })],
    ['delete', 'DELETE', (id) => `/api/token/${id}/`, () => undefined]
  ]
  for (const [what, method, url, payload] of attempts) {
    const other = await call(app, a, method, url(theirs.id), payload(theirs.id))
    const none = await call(app, a, method, url(missing), payload(missing))
    t.same(other.body, { success: false, message: 'Token not found' }, `${what}: another user's token is not found`)
    t.same([other.status, other.body], [none.status, none.body], `${what}: answered exactly like a missing id`)
  }
  const row = await stored(app, theirs.id)
  t.match(row, { name: 'shared-name', status: 1, remain_quota: 700, deleted_at: null }, 'the other user\'s token is untouched')

  const list = await call(app, a, 'GET', '/api/token/')
  t.same(list.body.data.items.map((x: Created) => x.id), [mine.id], 'the list shows own tokens only')
  const byName = await call(app, a, 'GET', '/api/token/search?keyword=shared')
  t.same(byName.body.data.items.map((x: Created) => x.id), [mine.id], 'a name search shows own tokens only')
  const byKey = await call(app, a, 'GET', `/api/token/search?token=${theirs.full_key}`)
  t.equal(byKey.body.data.total, 0, 'another user\'s key is not found')
  const byHint = await call(app, a, 'GET', `/api/token/search?token=${encodeURIComponent(theirs.key)}`)
  t.equal(byHint.body.data.total, 0, 'another user\'s masked key is not found')
})

t.test('searches tokens by name and by key, newest first and paged', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const alpha = await create(app, a, { name: 'Alpha prod' })
  const beta = await create(app, a, { name: 'beta' })
  const odd = await create(app, a, { name: '100%_off' })
  const ids = async (query: string) => (await call(app, a, 'GET', `/api/token/search?${query}`)).body.data.items.map((x: Created) => x.id)

  t.same(await ids('keyword=ALPHA'), [alpha.id], 'name substring, case-insensitive')
  t.same(await ids('keyword=%25'), [odd.id], '% is a plain character')
  t.same(await ids('keyword=_'), [odd.id], '_ is a plain character')
  t.same(await ids('keyword='), [odd.id, beta.id, alpha.id], 'no filter: all, newest first')
  t.same(await ids(`token=${beta.full_key}`), [beta.id], 'a full key')
  t.same(await ids(`token=${beta.full_key.slice(3)}`), [beta.id], 'a full key without sk-')
  t.same(await ids(`token=${encodeURIComponent(beta.key)}`), [beta.id], 'the masked key')
  t.ok((await ids(`token=${beta.full_key.slice(-4)}`)).includes(beta.id), 'the visible end of a key')
  t.ok((await ids(`token=${beta.full_key.slice(0, 7)}`)).includes(beta.id), 'the visible start of a key')
  t.same(await ids(`token=${beta.full_key.slice(3, 40)}`), [], 'a hidden part of a key matches nothing')
  t.same(await ids(`keyword=beta&token=${alpha.full_key}`), [], 'filters combine')

  const page2 = await call(app, a, 'GET', '/api/token/?p=2&size=2')
  t.match(page2.body.data, { page: 2, page_size: 2, total: 3 })
  t.same(page2.body.data.items.map((x: Created) => x.id), [alpha.id])
  const legacy = await call(app, a, 'GET', '/api/token/?p=1&page_size=1')
  t.match(legacy.body.data, { page: 1, page_size: 1, total: 3 }, 'page_size is accepted too')
  t.equal((await call(app, a, 'GET', '/api/token/?size=101')).body.data.page_size, 100, 'at most 100 per page')
})

t.test('validates token fields', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const refused = async (payload: object, message: string, what: string) =>
    t.same((await call(app, a, 'POST', '/api/token/', payload)).body, { success: false, message }, what)

  await refused({ name: '   ' }, 'The token name cannot be empty', 'a blank name')
  await refused({ name: 'x'.repeat(51) }, 'The token name may be at most 50 characters', 'a long name')
  t.equal((await create(app, a, { name: '名'.repeat(50) })).name, '名'.repeat(50), '50 characters of any script')
  await refused({ name: 'x', expired_time: now() - 60 }, 'The expiry time must be in the future, or -1 for never', 'a past expiry')
  await refused({ name: 'x', expired_time: 0 }, 'The expiry time must be in the future, or -1 for never', 'expiry 0')
  t.equal((await create(app, a, { name: 'x', expired_time: now() + 3600 })).status, 1, 'a future expiry')
  await refused({ name: 'x', allow_ips: '10.0.0.1\nnot-an-ip' }, 'Invalid IP address or CIDR range in the IP whitelist: not-an-ip', 'a bad IP line')
  await refused({ name: 'x', allow_ips: '10.0.0.0/33' }, 'Invalid IP address or CIDR range in the IP whitelist: 10.0.0.0/33', 'a prefix too long')
  await refused({ name: 'x', allow_ips: '10.0.0.0/' }, 'Invalid IP address or CIDR range in the IP whitelist: 10.0.0.0/', 'an empty prefix')
  await refused({ name: 'x', allow_ips: '::1/129' }, 'Invalid IP address or CIDR range in the IP whitelist: ::1/129', 'an IPv6 prefix too long')
  await refused({ name: 'x', group: 'svip' }, 'You cannot use group svip', 'a group the user may not use')
  await refused({ name: 'x', group: 'nosuch' }, 'You cannot use group nosuch', 'an unknown group')
  t.equal((await create(app, a, { name: 'x', group: 'vip' })).name, 'x', 'a usable group')
  await app.db.updateTable('users').set({ group: 'svip' }).where('id', '=', a.user.id).execute()
  t.equal((await call(app, a, 'POST', '/api/token/', { name: 'x', group: 'svip' })).body.success, true, 'the user\'s own group')

  for (const [payload, what] of [
    [{ remain_quota: 5 }, 'no name'],
    [{ name: 5 }, 'a number as name'],
    [{ name: 'x', remain_quota: '5' }, 'quota as text'],
    [{ name: 'x', remain_quota: -1 }, 'a negative quota'],
    [{ name: 'x', remain_quota: 1.5 }, 'a fractional quota'],
    [{ name: 'x', unlimited_quota: 'yes' }, 'a text flag'],
    [{ name: 'x', expired_time: -2 }, 'expiry below -1'],
    [{ name: 'x', count: '2' }, 'count as text'],
    [{ name: 'x', model_limits: ['gpt-4o'] }, 'model limits as a list']
  ] as const) {
    const res = await call(app, a, 'POST', '/api/token/', payload)
    t.equal(res.status, 400, what)
    t.equal(res.body.success, false)
  }
  t.equal((await call(app, a, 'PUT', '/api/token/', { id: 'one' })).status, 400, 'a text id')
  t.equal((await call(app, a, 'GET', '/api/token/abc')).status, 400, 'a text id in the path')

  const tok = await create(app, a, { name: 'edit-me', expired_time: now() + 3600 })
  const put = async (payload: object) => (await call(app, a, 'PUT', '/api/token/', { id: tok.id, ...payload })).body
  t.same(await put({ name: '' }), { success: false, message: 'The token name cannot be empty' })
  t.same(await put({ expired_time: now() - 5 }), { success: false, message: 'The expiry time must be in the future, or -1 for never' })
  t.same(await put({ allow_ips: '300.1.1.1' }), { success: false, message: 'Invalid IP address or CIDR range in the IP whitelist: 300.1.1.1' })
  t.same(await put({ group: 'svip2' }), { success: false, message: 'You cannot use group svip2' })
  t.match(await stored(app, tok.id), { name: 'edit-me', allow_ips: '', group: '' }, 'a refused edit changes nothing')
  const edited = await put({ name: ' renamed ', model_limits: 'a,b,a', allow_ips: '127.0.0.1', group: 'vip', remain_quota: 42, unlimited_quota: true, model_limits_enabled: true })
  t.match(edited, { success: true, message: 'Token updated', data: { name: 'renamed', model_limits: 'a,b', allow_ips: '127.0.0.1', group: 'vip', remain_quota: 42, unlimited_quota: true, model_limits_enabled: true } })
})

t.test('an expired token is enabled again only by moving its expiry', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const tok = await create(app, a, { name: 'soon', expired_time: now() + 3600 })
  const past = now() - 10
  await app.db.updateTable('tokens').set({ expired_time: past }).where('id', '=', tok.id).execute()
  t.equal((await call(app, a, 'GET', `/api/token/${tok.id}`)).body.data.status, 3, 'an enabled token past its expiry shows as expired')

  const enable = { id: tok.id, status: 1 }
  t.same((await call(app, a, 'PUT', '/api/token/?status_only=true', enable)).body, { success: false, message: 'This token has expired; change its expiry first' })
  t.same((await call(app, a, 'PUT', '/api/token/?status_only=true', { id: tok.id, status: 2 })).body.data.status, 2, 'disabling works')
  t.same((await call(app, a, 'PUT', '/api/token/?status_only=true', enable, ZH)).body, { success: false, message: '令牌已过期，请先修改过期时间' })
  t.equal((await stored(app, tok.id)).status, 2)
  t.same((await call(app, a, 'PUT', '/api/token/', { id: tok.id, name: 'soon', status: 1, expired_time: past })).body,
    { success: false, message: 'This token has expired; change its expiry first' }, 'a full update cannot enable it either while it stays expired')
  const renamed = await call(app, a, 'PUT', '/api/token/', { id: tok.id, name: 'renamed', status: 2, expired_time: past })
  t.match(renamed.body.data, { name: 'renamed', status: 2 }, 'the past expiry sent back unchanged is no error')

  const fixed = await call(app, a, 'PUT', '/api/token/', { id: tok.id, expired_time: -1, status: 1 })
  t.match(fixed.body.data, { status: 1, expired_time: -1 }, 'status 1 with a new expiry enables it')

  // Stored as expired (the system's own status): any edit that makes it valid enables it.
  await app.db.updateTable('tokens').set({ status: 3, expired_time: past }).where('id', '=', tok.id).execute()
  t.same((await call(app, a, 'PUT', '/api/token/?status_only=true', enable)).body.message, 'This token has expired; change its expiry first')
  t.equal((await call(app, a, 'PUT', '/api/token/', { id: tok.id, name: 'still' })).body.data.status, 3, 'an edit that leaves it expired keeps it expired')
  t.equal((await call(app, a, 'PUT', '/api/token/', { id: tok.id, status: 3, expired_time: now() + 60 })).body.data.status, 1, 'a future expiry enables it')
  t.equal((await stored(app, tok.id)).status, 1)

  t.equal((await call(app, a, 'PUT', '/api/token/?status_only=true', { id: tok.id, status: 3 })).status, 400, 'status 3 cannot be set')
  t.equal((await call(app, a, 'PUT', '/api/token/?status_only=true', { id: tok.id })).status, 400, 'status is needed')
})

t.test('an exhausted token is enabled again only by adding quota', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const tok = await create(app, a, { name: 'empty', remain_quota: 0 })
  t.equal(tok.status, 4, 'a limited token without quota shows as exhausted')
  const enable = { id: tok.id, status: 1 }
  t.same((await call(app, a, 'PUT', '/api/token/?status_only=true', enable)).body, { success: false, message: 'This token\'s quota is exhausted; add quota first' })
  t.same((await call(app, a, 'PUT', '/api/token/?status_only=true', enable, ZH)).body, { success: false, message: '令牌额度已用尽，请先增加额度' })

  await app.db.updateTable('tokens').set({ status: 4 }).where('id', '=', tok.id).execute()
  t.same((await call(app, a, 'PUT', '/api/token/', { id: tok.id, status: 1, remain_quota: 0 })).body.message, 'This token\'s quota is exhausted; add quota first')
  t.equal((await call(app, a, 'PUT', '/api/token/', { id: tok.id, name: 'x', status: 4 })).body.data.status, 4, 'an edit that leaves it empty keeps it exhausted')
  const topped = await call(app, a, 'PUT', '/api/token/', { id: tok.id, remain_quota: 1000, status: 4 })
  t.match(topped.body.data, { status: 1, remain_quota: 1000 }, 'positive quota enables it')

  await app.db.updateTable('tokens').set({ status: 4, remain_quota: -50 }).where('id', '=', tok.id).execute()
  t.match((await call(app, a, 'PUT', '/api/token/', { id: tok.id, unlimited_quota: true })).body.data, { status: 1, unlimited_quota: true }, 'an unlimited quota enables it')
  t.equal((await call(app, a, 'PUT', '/api/token/?status_only=true', { id: tok.id, status: 2 })).body.data.status, 2)
  t.equal((await call(app, a, 'PUT', '/api/token/?status_only=true', enable)).body.data.status, 1, 'an unlimited token with no quota left can be enabled')
})

t.test('quota edits move the cached balance by the same amount and keep spending settled meanwhile', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const tok = await create(app, a, { name: 'q', remain_quota: 5000 })
  await app.quota.setBalance('token', tok.id, 4800, a.row.id)
  t.equal((await call(app, a, 'PUT', '/api/token/', { id: tok.id, remain_quota: 8000 })).body.data.remain_quota, 8000)
  t.equal(await app.quota.balance('token', tok.id, a.row.id), 7800, 'the cached balance moved by +3000 too')

  // A settlement spends 300 after the edit read the row and before it writes.
  const trx = await app.db.startTransaction().execute()
  await trx.updateTable('tokens').set((eb) => ({ remain_quota: eb('remain_quota', '-', 300) })).where('id', '=', tok.id).execute()
  await app.quota.adjust('token', tok.id, -300, a.row.id)
  const edit = call(app, a, 'PUT', '/api/token/', { id: tok.id, remain_quota: 1000 })
  await until('the edit waits for the settlement\'s row lock', async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(app.db)
    return rows[0]!.n > 0
  })
  await trx.commit().execute()
  const res = await edit
  t.equal(res.body.success, true)
  t.equal(res.body.data.remain_quota, 700, 'the edit applied -7000 to what was there, so the 300 spent stays spent')
  t.equal((await stored(app, tok.id)).remain_quota, 700)
  t.equal(await app.quota.balance('token', tok.id, a.row.id), 500, 'the cached balance moved by the same -7000')
})

t.test('token changes are announced to the gateways and drop their cached record', async (t) => {
  const env = await sharedEnv(t)
  const app = await build(t, {}, env)
  const a = await userSession(app, 'alice')
  const sub = new Redis(env.REDIS_URL!)
  t.teardown(() => { sub.disconnect() })
  const seen: unknown[] = []
  sub.on('message', (_c: string, m: string) => { seen.push(JSON.parse(m)) })
  await sub.subscribe(configChannel(env.REDIS_KEY_PREFIX!))

  const announced = async (what: string, id: number, act: () => Promise<unknown>) => {
    const hash = (await stored(app, id)).key_hash
    await app.redis.set(tokenCacheKey(hash), '{"cached":true}')
    seen.length = 0
    await act()
    await until(`${what} is announced`, () => seen.some((c) => JSON.stringify(c) === JSON.stringify({ kind: 'token', id })))
    t.equal(await app.redis.exists(tokenCacheKey(hash)), 0, `${what}: the cached record is gone`)
  }

  const created = await call(app, a, 'POST', '/api/token/', { name: 'watched', count: 2 })
  const [tok, other] = created.body.data as Created[]
  await until('both new tokens are announced', () => [tok!.id, other!.id].every((id) => seen.some((c) => JSON.stringify(c) === JSON.stringify({ kind: 'token', id }))))
  await announced('an edit', tok!.id, async () => await call(app, a, 'PUT', '/api/token/', { id: tok!.id, name: 'renamed' }))
  await announced('disabling', tok!.id, async () => await call(app, a, 'PUT', '/api/token/?status_only=true', { id: tok!.id, status: 2 }))
  await announced('enabling', tok!.id, async () => await call(app, a, 'PUT', '/api/token/?status_only=true', { id: tok!.id, status: 1 }))

  await app.quota.setBalance('token', tok!.id, 123, a.row.id)
  await announced('deleting', tok!.id, async () => t.match((await call(app, a, 'DELETE', `/api/token/${tok!.id}/`)).body, { success: true, message: 'Token deleted' }))
  t.equal(await app.quota.balance('token', tok!.id, a.row.id), undefined, 'the cached balance of a deleted token is dropped')
  t.not((await stored(app, tok!.id)).deleted_at, null, 'soft-deleted')
  t.equal((await call(app, a, 'GET', `/api/token/${tok!.id}`)).body.message, 'Token not found')
  t.same((await call(app, a, 'GET', '/api/token/')).body.data.items.map((x: Created) => x.id), [other!.id], 'gone from the list')
  t.equal((await call(app, a, 'POST', `/api/token/${tok!.id}/key`)).body.success, false, 'a deleted token\'s key is not revealed')
  t.equal((await call(app, a, 'DELETE', `/api/token/${tok!.id}/`)).body.message, 'Token not found', 'deleting twice')

  await announced('deleting without the trailing slash', other!.id, async () => t.equal((await call(app, a, 'DELETE', `/api/token/${other!.id}`)).body.success, true))
})

t.test('saves per-token limits on create and edit and refuses values out of range', async (t) => {
  const app = await build(t)
  const a = await userSession(app, 'alice')
  const plain = await create(app, a, { name: 'plain' })
  t.match(plain, { rpm_limit: 0, tpm_limit: 0, concurrency_limit: 0 }, 'no limits unless asked')

  const limited = await create(app, a, { name: 'limited', rpm_limit: 60, tpm_limit: 100_000, concurrency_limit: 2 })
  t.match(limited, { rpm_limit: 60, tpm_limit: 100_000, concurrency_limit: 2 })
  t.match(await stored(app, limited.id), { rpm_limit: 60, tpm_limit: 100_000, concurrency_limit: 2 })
  t.match((await call(app, a, 'GET', `/api/token/${limited.id}`)).body.data, { rpm_limit: 60, tpm_limit: 100_000, concurrency_limit: 2 }, 'read back')
  const listed = (await call(app, a, 'GET', '/api/token/?p=1&size=10')).body.data.items as Array<{ id: number, rpm_limit: number }>
  t.equal(listed.find((x) => x.id === limited.id)?.rpm_limit, 60, 'the list shows them too')

  const put = async (payload: object) => await call(app, a, 'PUT', '/api/token/', { id: limited.id, ...payload })
  t.match((await put({ rpm_limit: 0, concurrency_limit: 5 })).body, { success: true, data: { rpm_limit: 0, tpm_limit: 100_000, concurrency_limit: 5 } }, 'an edit changes only the limits sent')
  t.match(await stored(app, limited.id), { rpm_limit: 0, tpm_limit: 100_000, concurrency_limit: 5 })
  t.match((await put({ name: 'renamed' })).body.data, { rpm_limit: 0, tpm_limit: 100_000, concurrency_limit: 5 }, 'an edit without them keeps them')
  t.match((await put({ rpm_limit: 1_000_000, tpm_limit: 2_000_000_000, concurrency_limit: 100_000 })).body.data, { rpm_limit: 1_000_000, tpm_limit: 2_000_000_000, concurrency_limit: 100_000 }, 'the largest values')

  for (const [field, value, words] of [
    ['rpm_limit', 1_000_001, /rpm_limit must be <= 1000000/],
    ['rpm_limit', -1, /rpm_limit must be >= 0/],
    ['tpm_limit', 2_000_000_001, /tpm_limit must be <= 2000000000/],
    ['concurrency_limit', 100_001, /concurrency_limit must be <= 100000/],
    ['concurrency_limit', 1.5, /concurrency_limit must be integer/],
    ['rpm_limit', '10', /rpm_limit must be integer/]
  ] as const) {
    for (const res of [await call(app, a, 'POST', '/api/token/', { name: 'x', [field]: value }), await put({ [field]: value })]) {
      t.equal(res.status, 400, `${field} ${value}`)
      t.equal(res.body.success, false)
      t.match(res.body.message, /^Invalid parameter: /, 'says the parameter is invalid')
      t.match(res.body.message, words, 'names the field and the bound')
    }
  }
  t.match(await stored(app, limited.id), { rpm_limit: 1_000_000, tpm_limit: 2_000_000_000, concurrency_limit: 100_000 }, 'a refused edit changes nothing')
})
