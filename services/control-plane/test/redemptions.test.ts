import { ROLES } from '@modelgate/contracts'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ConfigChange } from '@modelgate/contracts'
import { LOG_TYPE, updateUser } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { sha256 } from '../src/plugins/app/auth.js'
import { createAccount } from '../src/services/users.js'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

const EN = { 'accept-language': 'en' }
const ZH = { 'accept-language': 'zh-CN' }
const CODE = /^[0-9a-f]{32}$/
const INVALID = 'Invalid or used redemption code'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

async function call (app: FastifyInstance, s: Pick<Session, 'headers'>, method: Method, url: string, payload?: object, lang = EN) {
  const res = await app.inject({ method, url, headers: { ...s.headers, ...lang }, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, headers: res.headers, body: res.json() }
}

async function createCodes (app: FastifyInstance, s: Session, payload: object): Promise<string[]> {
  const res = await call(app, s, 'POST', '/api/redemption/', payload)
  if (res.body.success !== true) throw new Error(`create failed: ${res.body.message}`)
  return res.body.data
}

const codeRow = async (app: FastifyInstance, key: string) =>
  await app.db.selectFrom('redemptions').selectAll().where('key', '=', key).executeTakeFirstOrThrow()
const quotaOf = async (app: FastifyInstance, id: number) =>
  (await app.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota
const rechargeLogs = async (app: FastifyInstance) =>
  await app.db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.topup).orderBy('id').execute()
const liveCodes = async (app: FastifyInstance) =>
  Number((await app.db.selectFrom('redemptions').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n)

/** A normal user signed in with a personal access token (no password hashing, so many are cheap). */
async function tokenUser (app: FastifyInstance, username: string): Promise<{ id: number, headers: Record<string, string> }> {
  const row = await createAccount(app, { username })
  const token = randomBytes(24).toString('base64url')
  await updateUser(app.db, row.id, { access_token_hash: sha256(token) })
  return { id: row.id, headers: { authorization: token, 'new-api-user': String(row.id) } }
}

const redeem = async (app: FastifyInstance, s: Pick<Session, 'headers'>, key: string, lang = EN) =>
  (await call(app, s, 'POST', '/api/user/topup', { key }, lang)).body

t.test('admins create codes with defaults, then list, search and read them', async (t) => {
  const app = await build(t)
  const admin = await userSession(app, 'adm', ROLES.admin)

  const res = await call(app, admin, 'POST', '/api/redemption/', { name: '  promo  ', quota: 5000, count: 3 })
  t.equal(res.body.success, true)
  t.equal(res.body.message, '3 redemption codes created')
  t.equal(res.headers['cache-control'], 'no-store', 'answers carrying codes are not cached')
  const promo: string[] = res.body.data
  t.equal(promo.length, 3)
  for (const key of promo) t.match(key, CODE)
  t.equal(new Set(promo).size, 3, 'every code is different')
  for (const key of promo) {
    t.match(await codeRow(app, key), { name: 'promo', quota: 5000, status: 1, user_id: admin.user.id, used_user_id: 0, redeemed_time: 0, deleted_at: null })
  }

  const [plain] = await createCodes(app, admin, {})
  t.match(await codeRow(app, plain!), { name: '$0.20', quota: 100000, status: 1 }, 'default quota 100000, named after its worth in dollars')
  const [blank] = await createCodes(app, admin, { name: '   ', quota: 1_500_000 })
  t.equal((await codeRow(app, blank!)).name, '$3.00')
  await app.saveOptions({ DisplayInCurrencyEnabled: 'false' })
  const [units] = await createCodes(app, admin, { name: '', quota: 123 })
  t.equal((await codeRow(app, units!)).name, '123', 'without currency display the name is the quota')

  const list = await call(app, admin, 'GET', '/api/redemption/?p=1&page_size=10')
  t.equal(list.body.data.total, 6)
  t.match(list.body.data, { page: 1, page_size: 10 })
  const ids = list.body.data.items.map((r: { id: number }) => r.id)
  t.same(ids, [...ids].sort((a: number, b: number) => b - a), 'newest first')
  t.same(Object.keys(list.body.data.items[0]).sort(), ['created_time', 'id', 'key', 'name', 'quota', 'redeemed_time', 'status', 'used_user_id', 'user_id'])
  t.equal(list.body.data.items[0].key, units, 'admins see the code itself')
  const page2 = await call(app, admin, 'GET', '/api/redemption/?p=2&page_size=4')
  t.equal(page2.body.data.items.length, 2)
  t.equal(page2.body.data.total, 6)

  const byName = await call(app, admin, 'GET', '/api/redemption/search?keyword=PRO')
  t.same(byName.body.data.items.map((r: { key: string }) => r.key).sort(), [...promo].sort(), 'name substring, case-insensitive')
  const plainId = (await codeRow(app, plain!)).id
  const byId = await call(app, admin, 'GET', `/api/redemption/search?keyword=${plainId}`)
  t.ok(byId.body.data.items.some((r: { id: number }) => r.id === plainId), 'a numeric keyword matches the id')
  t.equal((await call(app, admin, 'GET', '/api/redemption/search?keyword=%25')).body.data.total, 0, 'LIKE wildcards are literal')

  const one = await call(app, admin, 'GET', `/api/redemption/${plainId}`)
  t.match(one.body.data, { id: plainId, key: plain, name: '$0.20', quota: 100000, status: 1 })
  t.same((await call(app, admin, 'GET', '/api/redemption/999999')).body, { success: false, message: 'Redemption code not found' })
})

t.test('refuses bad names, quotas and counts and creates nothing then', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const refused = async (payload: object, message: string) => {
    const res = await call(app, root, 'POST', '/api/redemption/', payload)
    t.same(res.body, { success: false, message }, JSON.stringify(payload))
  }
  await refused({ name: 'x'.repeat(21) }, 'The name must be 1 to 20 characters')
  await refused({ name: 'n', count: 0 }, 'The count must be an integer from 1 to 100')
  await refused({ name: 'n', count: 101 }, 'The count must be an integer from 1 to 100')
  await refused({ name: 'n', count: -1 }, 'The count must be an integer from 1 to 100')
  await refused({ name: 'n', quota: 0 }, 'The quota must be a whole number of at least 1')
  await refused({ name: 'n', quota: -5 }, 'The quota must be a whole number of at least 1')
  t.equal((await call(app, root, 'POST', '/api/redemption/', { name: 'n', quota: 1.5 })).status, 400, 'the quota is a whole number')
  const zh = await call(app, root, 'POST', '/api/redemption/', { name: 'n', count: 101 }, ZH)
  t.equal(zh.body.message, '生成数量必须是 1 到 100 之间的整数')
  t.equal(await liveCodes(app), 0, 'nothing was created')

  t.equal((await createCodes(app, root, { name: '兑'.repeat(20), quota: 1 })).length, 1, '20 characters are counted as characters, not bytes')
  const hundred = await createCodes(app, root, { name: 'batch', count: 100 })
  t.equal(hundred.length, 100)
  t.equal(new Set(hundred).size, 100)
  t.equal(await liveCodes(app), 101)
})

t.test('edits and toggles unused codes only; a used code stays as it was', async (t) => {
  const app = await build(t)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const user = await userSession(app, 'bob')
  const [key] = await createCodes(app, admin, { name: 'gift', quota: 1000 })
  const id = (await codeRow(app, key!)).id

  const edited = await call(app, admin, 'PUT', '/api/redemption/', { id, name: ' renamed ', quota: 4242 })
  t.equal(edited.body.success, true)
  t.equal(edited.body.message, 'Redemption code updated')
  t.match(edited.body.data, { id, name: 'renamed', quota: 4242, status: 1 })
  t.same((await call(app, admin, 'PUT', '/api/redemption/', { id, name: 'y'.repeat(21) })).body, { success: false, message: 'The name must be 1 to 20 characters' })
  t.same((await call(app, admin, 'PUT', '/api/redemption/', { id, quota: 0 })).body, { success: false, message: 'The quota must be a whole number of at least 1' })
  t.same((await call(app, admin, 'PUT', '/api/redemption/', { id: 999999, name: 'x' })).body, { success: false, message: 'Redemption code not found' })

  const disabled = await call(app, admin, 'PUT', '/api/redemption/?status_only=true', { id, status: 2 })
  t.match(disabled.body, { success: true, data: { id, status: 2 } })
  t.same(await redeem(app, user, key!), { success: false, message: INVALID }, 'a disabled code cannot be redeemed')
  t.same((await call(app, admin, 'PUT', '/api/redemption/?status_only=true', { id, status: 3 })).body,
    { success: false, message: 'The status can only be set to 1 (enabled) or 2 (disabled)' }, 'nobody marks a code used by hand')
  t.match((await call(app, admin, 'PUT', '/api/redemption/', { id, quota: 5000 })).body, { success: true, data: { quota: 5000, status: 2 } }, 'a disabled code is still editable')
  t.match((await call(app, admin, 'PUT', '/api/redemption/?status_only=true', { id, status: 1 })).body, { success: true, data: { status: 1 } })

  t.match(await redeem(app, user, key!), { success: true, data: 5000 }, 'the edited quota is what gets credited')
  const used = await codeRow(app, key!)
  t.match(used, { status: 3, used_user_id: user.user.id, quota: 5000, name: 'renamed' })

  t.same((await call(app, admin, 'PUT', '/api/redemption/', { id, name: 'again', quota: 9 })).body,
    { success: false, message: 'This redemption code has been used and cannot be edited' })
  for (const status of [1, 2]) {
    t.same((await call(app, admin, 'PUT', '/api/redemption/?status_only=true', { id, status })).body,
      { success: false, message: 'This redemption code has been used; it cannot be enabled or disabled' }, `used code to status ${status}`)
  }
  t.same(await codeRow(app, key!), used, 'the used code is unchanged')
  t.match((await call(app, admin, 'GET', `/api/redemption/${id}`)).body.data, { status: 3, used_user_id: user.user.id })
})

t.test('deleted codes disappear and cannot be redeemed', async (t) => {
  const app = await build(t)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const user = await userSession(app, 'bob')
  const [gone, kept] = await createCodes(app, admin, { name: 'pair', count: 2 })
  const goneId = (await codeRow(app, gone!)).id
  const del = await call(app, admin, 'DELETE', `/api/redemption/${goneId}/`)
  t.same(del.body, { success: true, message: 'Redemption code deleted', data: null })
  t.ok((await codeRow(app, gone!)).deleted_at !== null, 'soft-deleted: the row stays')
  const list = await call(app, admin, 'GET', '/api/redemption/')
  t.same(list.body.data.items.map((r: { key: string }) => r.key), [kept])
  t.equal(list.body.data.total, 1)
  t.same((await call(app, admin, 'GET', `/api/redemption/${goneId}`)).body, { success: false, message: 'Redemption code not found' })
  t.same((await call(app, admin, 'DELETE', `/api/redemption/${goneId}`)).body, { success: false, message: 'Redemption code not found' })
  t.same((await call(app, admin, 'PUT', '/api/redemption/?status_only=true', { id: goneId, status: 1 })).body, { success: false, message: 'Redemption code not found' })
  t.same(await redeem(app, user, gone!), { success: false, message: INVALID })
  t.equal(await quotaOf(app, user.user.id), 0)
})

t.test('only admins manage codes', async (t) => {
  const app = await build(t)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const normal = await userSession(app, 'bob')
  const [key] = await createCodes(app, admin, { name: 'secret' })
  const id = (await codeRow(app, key!)).id
  const attempts: Array<[Method, string, object?]> = [
    ['GET', '/api/redemption/'],
    ['GET', '/api/redemption/search?keyword=secret'],
    ['GET', `/api/redemption/${id}`],
    ['POST', '/api/redemption/', { name: 'mine', quota: 1_000_000_000 }],
    ['PUT', '/api/redemption/', { id, quota: 1_000_000_000 }],
    ['PUT', '/api/redemption/?status_only=true', { id, status: 2 }],
    ['DELETE', `/api/redemption/${id}/`]
  ]
  for (const [method, url, payload] of attempts) {
    const res = await call(app, normal, method, url, payload)
    t.equal(res.status, 403, `${method} ${url} refuses a normal user`)
    t.equal(res.body.success, false)
    t.notOk(JSON.stringify(res.body).includes(key!), 'no code leaks')
    t.equal((await call(app, { headers: {} }, method, url, payload)).status, 401, `${method} ${url} refuses an anonymous caller`)
  }
  t.match(await codeRow(app, key!), { quota: 100000, status: 1, deleted_at: null }, 'nothing changed')
  t.equal(await liveCodes(app), 1)
})

t.test('redeeming credits Postgres and the cached balance, logs without the code and says so once', async (t) => {
  const app = await build(t)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const user = await userSession(app, 'bob')
  const other = await userSession(app, 'eve')
  const changes: ConfigChange[] = []
  app.onChange((c) => changes.push(c))
  const [key, disabled] = await createCodes(app, admin, { name: 'welcome', quota: 250000, count: 2 })
  await call(app, admin, 'PUT', '/api/redemption/?status_only=true', { id: (await codeRow(app, disabled!)).id, status: 2 })
  await app.db.updateTable('users').set({ quota: 1000 }).where('id', '=', user.user.id).execute()
  await app.quota.setBalance('user', user.user.id, 700)

  t.same(await redeem(app, user, ''), { success: false, message: 'Please enter the redemption code' })
  t.same(await redeem(app, user, '   '), { success: false, message: 'Please enter the redemption code' })
  t.same(await redeem(app, user, `  ${key!}  `), { success: true, message: 'Redeemed', data: 250000 }, 'surrounding blanks of a pasted code are ignored')
  t.equal(await quotaOf(app, user.user.id), 251000)
  t.equal(await app.quota.balance('user', user.user.id), 250700, 'the gateways\' cached balance moved by the same amount')
  t.match(await codeRow(app, key!), { status: 3, used_user_id: user.user.id })
  t.ok((await codeRow(app, key!)).redeemed_time >= Math.floor(Date.now() / 1000) - 5)

  const logs = await rechargeLogs(app)
  t.equal(logs.length, 1)
  t.match(logs[0], { type: LOG_TYPE.topup, user_id: user.user.id, username: 'bob', quota: 250000 })
  t.match(logs[0]!.content, /welcome/)
  t.match(logs[0]!.content, /\$0\.50/)
  t.notOk(logs[0]!.content.includes(key!), 'the code never reaches the log')
  for (let i = 0; i < 200 && !changes.some((c) => c.kind === 'user' && c.id === user.user.id); i++) await sleep(10)
  t.ok(changes.some((c) => c.kind === 'user' && c.id === user.user.id), 'the gateways are told to reload the user')

  // Used, unknown and disabled codes answer alike, so nobody learns which codes exist.
  t.same(await redeem(app, user, key!), { success: false, message: INVALID }, 'used by oneself')
  t.same(await redeem(app, other, key!), { success: false, message: INVALID }, 'used by someone else')
  t.same(await redeem(app, other, 'f'.repeat(32)), { success: false, message: INVALID }, 'unknown')
  t.same(await redeem(app, other, disabled!), { success: false, message: INVALID }, 'disabled')
  t.same(await redeem(app, other, key!, ZH), { success: false, message: '无效的兑换码或兑换码已被使用' })
  t.equal(await quotaOf(app, user.user.id), 251000)
  t.equal(await quotaOf(app, other.user.id), 0)
  t.equal((await rechargeLogs(app)).length, 1)
  t.equal((await call(app, { headers: {} }, 'POST', '/api/user/topup', { key })).status, 401, 'signed-in users only')
})

t.test('50 users redeeming one code at once: exactly one is credited', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const [key] = await createCodes(app, root, { name: 'race', quota: 777777 })
  const users = await Promise.all(Array.from({ length: 50 }, async (_, i) => await tokenUser(app, `racer${i}`)))
  for (const u of users) await app.quota.setBalance('user', u.id, 0)

  const answers = await Promise.all(users.map(async (u) => await redeem(app, u, key!)))
  const winners = answers.flatMap((a, i) => a.success === true ? [users[i]!] : [])
  t.equal(winners.length, 1, 'one success')
  t.equal(answers.filter((a) => a.success === false && a.message === INVALID).length, 49, 'everyone else is refused')
  const winner = winners[0]!
  const quotas = await Promise.all(users.map(async (u) => await quotaOf(app, u.id)))
  t.equal(quotas.reduce((a, b) => a + b, 0), 777777, 'the code was credited once in all')
  t.equal(await quotaOf(app, winner.id), 777777)
  const cached = await Promise.all(users.map(async (u) => await app.quota.balance('user', u.id)))
  t.equal(cached.reduce((a: number, b) => a + (b ?? 0), 0), 777777, 'and once in the cached balances')
  const logs = await rechargeLogs(app)
  t.equal(logs.length, 1, 'one recharge log')
  t.equal(logs[0]!.user_id, winner.id)
  t.match(await codeRow(app, key!), { status: 3, used_user_id: winner.id })
})

t.test('one user redeeming one code 20 times at once is credited once', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const [key] = await createCodes(app, root, { name: 'twice', quota: 31337 })
  const user = await tokenUser(app, 'greedy')
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await redeem(app, user, key!)))
  t.equal(answers.filter((a) => a.success === true).length, 1)
  t.equal(answers.filter((a) => a.message === INVALID).length, 19)
  t.equal(await quotaOf(app, user.id), 31337)
  t.equal((await rechargeLogs(app)).length, 1)
  t.match(await codeRow(app, key!), { status: 3, used_user_id: user.id })
})

t.test('redeem attempts are rate limited per user', async (t) => {
  const app = await build(t)
  const guesser = await tokenUser(app, 'guesser')
  const honest = await tokenUser(app, 'honest')
  const statuses: number[] = []
  for (let i = 0; i < 31; i++) {
    const res = await app.inject({ method: 'POST', url: '/api/user/topup', headers: { ...guesser.headers, ...EN }, payload: { key: randomBytes(16).toString('hex') } })
    statuses.push(res.statusCode)
  }
  t.same(statuses.slice(0, 30), Array(30).fill(200), '30 attempts a minute are allowed')
  t.equal(statuses[30], 429, 'the 31st is refused')
  const root = await login(app, ROOT.username, ROOT.password)
  const [key] = await createCodes(app, root, { name: 'late' })
  t.equal((await app.inject({ method: 'POST', url: '/api/user/topup', headers: guesser.headers, payload: { key } })).statusCode, 429, 'even with a valid code')
  t.match(await redeem(app, honest, key!), { success: true, data: 100000 }, 'another user from the same address is not affected')
})
