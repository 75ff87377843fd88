import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { type ConfigChange, LOG_TYPE } from '@modelgate/contracts'
import { updateUser } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { sha256 } from '../src/plugins/app/auth.js'
import { checkIn } from '../src/services/checkin.js'
import { createAccount } from '../src/services/users.js'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

const EN = { 'accept-language': 'en' }
const ZH = { 'accept-language': 'zh-CN' }
const DISABLED = 'Daily check-in is not enabled by the administrator'
const TWICE = 'You have already checked in today (days follow UTC)'

type Caller = Pick<Session, 'headers'>

async function call (app: FastifyInstance, s: Caller, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, lang = EN) {
  const res = await app.inject({ method, url, headers: { ...s.headers, ...lang }, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, body: res.json() }
}

const checkin = async (app: FastifyInstance, s: Caller, lang = EN, query = '') => (await call(app, s, 'POST', `/api/user/checkin${query}`, undefined, lang)).body
const status = async (app: FastifyInstance, s: Caller, query = '') => (await call(app, s, 'GET', `/api/user/checkin${query}`)).body

const today = () => new Date().toISOString().slice(0, 10)
const quotaOf = async (app: FastifyInstance, id: number) =>
  (await app.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota
const checkinRows = async (app: FastifyInstance, id: number) =>
  await app.db.selectFrom('checkins').selectAll().where('user_id', '=', id).orderBy('checkin_date').execute()
const rechargeLogs = async (app: FastifyInstance, id: number) =>
  await app.db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.topup).where('user_id', '=', id).orderBy('id').execute()

/** A normal user signed in with a personal access token (no password hashing, so many are cheap). */
async function tokenUser (app: FastifyInstance, username: string): Promise<{ id: number, headers: Record<string, string> }> {
  const row = await createAccount(app, { username })
  const token = randomBytes(24).toString('base64url')
  await updateUser(app.db, row.id, { access_token_hash: sha256(token) })
  return { id: row.id, headers: { authorization: token, 'new-api-user': String(row.id) } }
}

async function enable (app: FastifyInstance, min: number, max: number): Promise<void> {
  await app.saveOptions({ 'checkin_setting.enabled': 'true', 'checkin_setting.min_quota': String(min), 'checkin_setting.max_quota': String(max) })
}

t.test('while check-in is off (the default) it is refused in the user\'s language and nothing is credited', async (t) => {
  const app = await build(t)
  const user = await tokenUser(app, 'bob')

  t.same(await status(app, user), {
    success: true,
    message: '',
    data: { enabled: false, min_quota: 1000, max_quota: 10000, stats: { checked_in_today: false, records: [], checkin_count: 0, total_quota: 0, total_checkins: 0 } }
  }, 'the settings and empty stats, with new-api\'s defaults')
  t.same(await checkin(app, user), { success: false, message: DISABLED })
  t.same(await checkin(app, user, ZH), { success: false, message: '管理员未开启每日签到' })
  t.equal(await quotaOf(app, user.id), 0)
  t.same(await checkinRows(app, user.id), [])
  t.same(await rechargeLogs(app, user.id), [])

  await enable(app, 100, 100)
  await app.saveOptions({ 'checkin_setting.enabled': 'false' })
  t.same(await checkin(app, user), { success: false, message: DISABLED }, 'switched on and off again: refused')
  t.equal((await call(app, { headers: {} }, 'GET', '/api/user/checkin')).status, 401, 'signed-in users only')
  t.equal((await call(app, { headers: {} }, 'POST', '/api/user/checkin')).status, 401)
})

t.test('a check-in credits a reward within the bounds to Postgres and to the gateways\' cached balance, once a day', async (t) => {
  const app = await build(t)
  const user = await tokenUser(app, 'bob')
  const changes: ConfigChange[] = []
  app.onChange((c) => changes.push(c))
  await enable(app, 500, 1500)
  await app.db.updateTable('users').set({ quota: 1000 }).where('id', '=', user.id).execute()
  await app.quota.setBalance('user', user.id, 700)

  const first = await checkin(app, user)
  t.equal(first.success, true)
  const q: number = first.data.quota_awarded
  t.ok(Number.isInteger(q) && q >= 500 && q <= 1500, `the reward ${q} is within [500, 1500]`)
  t.same(first.data, { quota_awarded: q, checkin_date: today() }, 'today\'s (UTC) date')
  t.equal(first.message, `Checked in: ${q >= 5000 ? `$${(q / 500000).toFixed(2)}` : q} added to your balance`)
  t.equal(await quotaOf(app, user.id), 1000 + q, 'users.quota grew by the reward')
  t.equal(await app.quota.balance('user', user.id), 700 + q, 'the gateways\' cached balance moved by the same amount')
  t.match(await checkinRows(app, user.id), [{ checkin_date: today(), quota_awarded: q }])
  const logs = await rechargeLogs(app, user.id)
  t.equal(logs.length, 1, 'one recharge log row')
  t.match(logs[0], { type: LOG_TYPE.topup, username: 'bob', quota: q, content: `Daily check-in: +${q}` })
  for (let i = 0; i < 200 && !changes.some((c) => c.kind === 'user' && c.id === user.id); i++) await sleep(10)
  t.ok(changes.some((c) => c.kind === 'user' && c.id === user.id), 'the gateways are told to reload the user')

  t.same(await checkin(app, user), { success: false, message: TWICE }, 'a second check-in the same day is refused')
  t.same(await checkin(app, user, ZH), { success: false, message: '今日已签到（按 UTC 时间计算日期）' })
  t.equal(await quotaOf(app, user.id), 1000 + q, 'and credits nothing')
  t.equal(await app.quota.balance('user', user.id), 700 + q)
  t.equal((await rechargeLogs(app, user.id)).length, 1)

  t.same((await status(app, user)).data, {
    enabled: true,
    min_quota: 500,
    max_quota: 1500,
    stats: { checked_in_today: true, records: [{ checkin_date: today(), quota_awarded: q }], checkin_count: 1, total_quota: q, total_checkins: 1 }
  })

  // The next UTC day is a new day.
  const tomorrow = new Date(Date.now() + 86_400_000)
  const next = await checkIn({ db: app.db, quota: app.quota, publishChange: app.publishChange, loadOptions: app.loadOptions }, (await app.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow()), tomorrow)
  t.equal(next.checkin_date, tomorrow.toISOString().slice(0, 10))
  t.equal(await quotaOf(app, user.id), 1000 + q + next.quota_awarded, 'credited again the next day')
  t.equal((await checkinRows(app, user.id)).length, 2)
})

t.test('rewards are drawn from the whole range, bounds included, and reach balances below zero', async (t) => {
  const app = await build(t)
  await enable(app, 250_000, 250_000)
  const fixed = await tokenUser(app, 'fixed')
  const answer = await checkin(app, fixed)
  t.same(answer, { success: true, message: 'Checked in: $0.50 added to your balance', data: { quota_awarded: 250_000, checkin_date: today() } }, 'min = max: exactly that')
  t.equal((await rechargeLogs(app, fixed.id))[0]?.content, 'Daily check-in: +$0.50', 'the log says what was credited, as the console shows money')

  const debtor = await tokenUser(app, 'debtor')
  await app.db.updateTable('users').set({ quota: -300_000 }).where('id', '=', debtor.id).execute()
  await app.quota.setBalance('user', debtor.id, -300_000)
  t.equal((await checkin(app, debtor)).success, true, 'a balance left below zero by settlement is credited too')
  t.equal(await quotaOf(app, debtor.id), -50_000)
  t.equal(await app.quota.balance('user', debtor.id), -50_000)

  await enable(app, 10, 12)
  const users = await Promise.all(Array.from({ length: 40 }, async (_, i) => await tokenUser(app, `draw${i}`)))
  const rewards = await Promise.all(users.map(async (u) => (await checkin(app, u)).data.quota_awarded as number))
  t.ok(rewards.every((r) => r >= 10 && r <= 12), 'every reward within [10, 12]')
  t.ok(new Set(rewards).size > 1, `not always the same reward (${[...new Set(rewards)].sort().join(', ')})`)
  for (const [i, u] of users.entries()) t.equal(await quotaOf(app, u.id), rewards[i], `draw${i} got what it was told`)
})

t.test('twenty concurrent check-ins by one user credit exactly once', async (t) => {
  const app = await build(t)
  await enable(app, 1000, 5000)
  const user = await tokenUser(app, 'greedy')
  await app.quota.setBalance('user', user.id, 0)

  const answers = await Promise.all(Array.from({ length: 20 }, async () => await checkin(app, user)))
  const wins = answers.filter((a) => a.success === true)
  t.equal(wins.length, 1, 'one success')
  t.equal(answers.filter((a) => a.success === false && a.message === TWICE).length, 19, 'the others are refused as already checked in')
  const q: number = wins[0].data.quota_awarded
  t.equal(await quotaOf(app, user.id), q, 'users.quota credited once')
  t.equal(await app.quota.balance('user', user.id), q, 'the cached balance credited once')
  t.equal((await checkinRows(app, user.id)).length, 1, 'one check-in row')
  t.equal((await rechargeLogs(app, user.id)).length, 1, 'one recharge log row')
})

t.test('the history is read by month, the current month by default', async (t) => {
  const app = await build(t)
  await enable(app, 7, 7)
  const user = await tokenUser(app, 'bob')
  const other = await tokenUser(app, 'eve')
  await app.db.insertInto('checkins').values([
    { user_id: user.id, checkin_date: '2020-01-31', quota_awarded: 1 },
    { user_id: user.id, checkin_date: '2020-02-01', quota_awarded: 20 },
    { user_id: user.id, checkin_date: '2020-02-29', quota_awarded: 300 },
    { user_id: user.id, checkin_date: '2020-03-01', quota_awarded: 4000 },
    { user_id: other.id, checkin_date: '2020-02-10', quota_awarded: 50000 }
  ]).execute()
  t.equal((await checkin(app, user)).success, true)

  const feb = await status(app, user, '?month=2020-02')
  t.same(feb.data.stats, {
    checked_in_today: true,
    records: [{ checkin_date: '2020-02-29', quota_awarded: 300 }, { checkin_date: '2020-02-01', quota_awarded: 20 }],
    checkin_count: 2,
    total_quota: 4328,
    total_checkins: 5
  }, 'that month\'s own records, newest first, last day included; totals are all time')
  t.same((await status(app, user, '?month=2020-01')).data.stats.records, [{ checkin_date: '2020-01-31', quota_awarded: 1 }])
  t.same((await status(app, user, '?month=2019-12')).data.stats.records, [])
  t.same((await status(app, user)).data.stats.records, [{ checkin_date: today(), quota_awarded: 7 }], 'by default this month')
  t.same((await status(app, user, `?month=${today().slice(0, 7)}`)).data.stats.records, [{ checkin_date: today(), quota_awarded: 7 }])
  t.same((await status(app, other, '?month=2020-02')).data.stats, {
    checked_in_today: false, records: [{ checkin_date: '2020-02-10', quota_awarded: 50000 }], checkin_count: 1, total_quota: 50000, total_checkins: 1
  }, 'each user sees only their own')
  for (const bad of ['2020-13', '2020-2', 'feb', '2020-02-01']) {
    const res = await call(app, user, 'GET', `/api/user/checkin?month=${bad}`)
    t.equal(res.status, 400, `month ${bad} is refused`)
    t.equal(res.body.success, false)
  }
})

t.test('the reward bounds are validated as options: whole numbers from 0, minimum not above maximum', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const put = async (key: string, value: unknown, lang = EN) => (await call(app, root, 'PUT', '/api/option/', { key, value }, lang)).body
  const stored = async () => Object.fromEntries(((await call(app, root, 'GET', '/api/option/')).body.data as Array<{ key: string, value: string }>)
    .filter((i) => i.key.startsWith('checkin_setting.')).map((i) => [i.key, i.value]))
  t.same(await stored(), { 'checkin_setting.enabled': 'false', 'checkin_setting.min_quota': '1000', 'checkin_setting.max_quota': '10000' }, 'the defaults are listed')

  t.same(await put('checkin_setting.min_quota', '20000'), { success: false, message: 'The check-in minimum (20000) cannot be above the maximum (10000)' }, 'min > stored max')
  t.same(await put('checkin_setting.max_quota', 999), { success: false, message: 'The check-in minimum (1000) cannot be above the maximum (999)' }, 'max < stored min')
  t.equal((await put('checkin_setting.max_quota', 999, ZH)).message, '签到最小额度（1000）不能大于最大额度（999）')
  t.equal((await put('checkin_setting.min_quota', -1)).success, false, 'negative refused')
  t.equal((await put('checkin_setting.min_quota', '1.5')).success, false, 'fractions refused')
  t.equal((await put('checkin_setting.max_quota', 'lots')).success, false, 'text refused')
  t.equal((await put('checkin_setting.max_quota', '1000000000001')).success, false, 'past the largest reward refused')
  t.equal((await put('checkin_setting.enabled', 'yes')).success, false, 'the switch takes true or false')
  t.same(await stored(), { 'checkin_setting.enabled': 'false', 'checkin_setting.min_quota': '1000', 'checkin_setting.max_quota': '10000' }, 'nothing was stored')

  // Raising both: the maximum first, then the minimum (the console's order).
  t.equal((await put('checkin_setting.max_quota', '50000')).success, true)
  t.equal((await put('checkin_setting.min_quota', '50000')).success, true, 'min = max is allowed')
  t.equal((await put('checkin_setting.min_quota', 0)).success, true, '0 is allowed')
  t.equal((await put('checkin_setting.enabled', true)).success, true)
  t.same(await stored(), { 'checkin_setting.enabled': 'true', 'checkin_setting.min_quota': '0', 'checkin_setting.max_quota': '50000' })
  t.match((await status(app, root)).data, { enabled: true, min_quota: 0, max_quota: 50000 }, 'users read the new settings')
  const user = await userSession(app, 'carol')
  t.equal((await call(app, user, 'PUT', '/api/option/', { key: 'checkin_setting.enabled', value: 'false' })).status, 403, 'only the super admin sets them')
})

t.test('with Turnstile on, a check-in needs a valid token', async (t) => {
  const seen: Array<Record<string, string>> = []
  const siteverify: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body))
      seen.push(form)
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ success: form['secret'] === 'ts-secret' && form['response'] === 'good-token' }))
    })
  })
  await new Promise<void>((resolve) => siteverify.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => siteverify.close(() => { resolve() })))
  const url = `http://127.0.0.1:${(siteverify.address() as AddressInfo).port}/siteverify`
  const app = await build(t, { TURNSTILE_VERIFY_URL: url })
  await app.saveOptions({ TurnstileCheckEnabled: 'true', TurnstileSecretKey: 'ts-secret' })
  const user = await tokenUser(app, 'bob')

  t.same(await checkin(app, user), { success: false, message: DISABLED }, 'off: refused before any challenge')
  t.equal(seen.length, 0, 'no call to siteverify')
  await enable(app, 100, 100)
  t.same(await checkin(app, user), { success: false, message: 'Turnstile token is empty; please retry in a few seconds' })
  t.same(await checkin(app, user, EN, '?turnstile=bad-token'), { success: false, message: 'Turnstile verification failed; please refresh and retry' })
  t.equal(await quotaOf(app, user.id), 0, 'nothing credited without a valid token')
  t.same(await checkinRows(app, user.id), [])
  t.match(await checkin(app, user, EN, '?turnstile=good-token'), { success: true, data: { quota_awarded: 100 } })
  t.match(seen.at(-1), { secret: 'ts-secret', response: 'good-token' })
  t.equal(await quotaOf(app, user.id), 100)
})
