import { randomBytes } from 'node:crypto'
import { LOG_TYPE, type OptionValues } from '@modelgate/contracts'
import { SecretBox, tokenKeyHash } from '@modelgate/service'
import { TEST_SECRETS, until } from '@modelgate/testing'
import t from 'tap'
import { apiSession } from '../src/api.js'
import { startSystem } from '../src/system.js'
import { fakeOpenAI } from '../src/upstream.js'

/*
 * ErrorLogEnabled end to end, over real HTTP: the super admin switches it on through the console
 * API, the gateway refuses a request for a model without a price as it always did, the refusal
 * travels as a usage event on the BullMQ queue, the billing worker writes its one error log row,
 * and the admin's and the user's log screens list it; nothing is charged or counted.
 */

interface LogRow {
  id: number, type: number, quota: number, content: string, model_name: string, token_id: number, token_name: string, user_id: number, username: string,
  group: string, ip: string, request_id: string, is_stream: boolean, use_time: number, channel_id?: number, other: Record<string, unknown> | null
}
interface LogPage { items: LogRow[], total: number }

const PASSWORD = 'refused-pass-1'
const NOT_PRICED = 'Model house-model has no price set; ask the administrator to set its ratio or price'

const system = await startSystem(t)
const upstream = await fakeOpenAI(t, { models: ['gpt-4o-mini', 'house-model'] })
const root = await apiSession(t, system.url, 'root', '123456')
const db = system.controlPlane.db
await root.call('POST', '/api/channel/', {
  name: 'fake upstream', type: 1, key: 'sk-fake-upstream', base_url: upstream.url, models: 'gpt-4o-mini,house-model', groups: 'default', auto_ban: 0
})
await root.call('POST', '/api/user/', { username: 'refusee', password: PASSWORD, display_name: 'refusee' })
const user = await db.updateTable('users').set({ quota: 5_000_000 }).where('username', '=', 'refusee').returningAll().executeTakeFirstOrThrow()
const key = `sk-${randomBytes(24).toString('hex')}`
const token = await db.insertInto('tokens').values({
  user_id: user.id, name: 'refusee-key', key_hash: tokenKeyHash(key), key_encrypted: new SecretBox(TEST_SECRETS.CRYPTO_SECRET).seal(key), remain_quota: 2_000_000,
  unlimited_quota: false, status: 1, expired_time: -1, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '', rpm_limit: 0, tpm_limit: 0,
  concurrency_limit: 0, deleted_at: null
}).returningAll().executeTakeFirstOrThrow()
const self = await apiSession(t, system.url, 'refusee', PASSWORD)

const chat = async (model: string, bearer = key, stream = false) => {
  const res = await fetch(`${system.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'accept-language': 'en' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hello' }] })
  })
  return { status: res.status, body: await res.text() }
}
const adminLogs = async (query: string) => await root.call<LogPage>('GET', `/api/log/?p=1&page_size=100&${query}`)
const balances = async () => ({
  user: await db.selectFrom('users').select(['quota', 'used_quota', 'request_count']).where('id', '=', user.id).executeTakeFirstOrThrow(),
  token: await db.selectFrom('tokens').select(['remain_quota', 'used_quota']).where('id', '=', token.id).executeTakeFirstOrThrow()
})
const buckets = async (model: string) => await db.selectFrom('quota_data').selectAll().where('model_name', '=', model).execute()
/** Waits until the gateway holds `value` for the option (the console's change announcement). */
const gatewayState = system.gateway as unknown as { relayState: { options: OptionValues } }
const gatewaySees = async (value: boolean) => await until(() => gatewayState.relayState.options.bool('ErrorLogEnabled') === value, 10_000)

t.test('the option: off by default, set and read back through /api/option/', async (t) => {
  const read = async () => (await root.call<Array<{ key: string, value: string }>>('GET', '/api/option/')).find((o) => o.key === 'ErrorLogEnabled')?.value
  t.equal(await read(), 'false', 'off by default')
  t.match(await root.send('PUT', '/api/option/', { key: 'ErrorLogEnabled', value: 'maybe' }), { success: false, message: /true or false/ })
  await root.call('PUT', '/api/option/', { key: 'ErrorLogEnabled', value: true })
  t.equal(await read(), 'true', 'stored as new-api\'s string')
  t.ok(await gatewaySees(true), 'the gateway has it')
  await root.call('PUT', '/api/option/', { key: 'ErrorLogEnabled', value: 'false' })
  t.equal(await read(), 'false')
  t.ok(await gatewaySees(false))
  t.match(await self.send('PUT', '/api/option/', { key: 'ErrorLogEnabled', value: 'true' }), { success: false }, 'a common user may not set it')
})

t.test('off: a refused request leaves no log row', async (t) => {
  t.ok(await gatewaySees(false))
  const refused = await chat('house-model')
  t.equal(refused.status, 403)
  t.match(JSON.parse(refused.body), { error: { code: 'model_not_priced', message: NOT_PRICED } })
  // A request served after it: once its row is in, the refusal's would have been too.
  t.equal((await chat('gpt-4o-mini')).status, 200)
  t.ok(await until(async () => (await adminLogs(`type=${LOG_TYPE.consume}&model_name=gpt-4o-mini`)).total >= 1, 30_000), 'the served request is logged')
  t.equal((await adminLogs('model_name=house-model')).total, 0, 'nothing logged for the refused one')
})

t.test('on: a request for a model without a price is refused as before and logged once, charging nothing', async (t) => {
  await root.call('PUT', '/api/option/', { key: 'ErrorLogEnabled', value: 'true' })
  t.ok(await gatewaySees(true))
  const before = await balances()
  const callsBefore = upstream.calls
  const refused = await chat('house-model', key, true)
  t.equal(refused.status, 403, 'the same refusal as with the option off')
  t.match(JSON.parse(refused.body), { error: { code: 'model_not_priced', message: NOT_PRICED, type: 'invalid_request_error' } })
  t.ok(await until(async () => (await adminLogs('model_name=house-model')).total >= 1, 30_000), 'an error row appears')
  // Another served request, settled after it: nothing more comes for the refused one.
  t.equal((await chat('gpt-4o-mini')).status, 200)
  t.ok(await until(async () => (await adminLogs(`type=${LOG_TYPE.consume}&model_name=gpt-4o-mini`)).total >= 2, 30_000))
  const rows = (await adminLogs('model_name=house-model')).items
  t.equal(rows.length, 1, 'exactly one row')
  t.match(rows[0], {
    type: LOG_TYPE.error, quota: 0, content: NOT_PRICED, model_name: 'house-model', token_id: token.id, token_name: 'refusee-key', user_id: user.id,
    username: 'refusee', group: 'default', ip: '127.0.0.1', is_stream: true, channel_id: 0
  })
  t.match(rows[0]!.request_id, /^[0-9a-f-]{36}$/, 'with the request id')
  t.ok(rows[0]!.use_time >= 0 && rows[0]!.use_time < 60, 'with its use time')
  t.match(rows[0]!.other, { outcome: 'refused', admin_info: { use_channel: [] } }, 'admins see the admin details')
  t.equal((await adminLogs(`type=${LOG_TYPE.error}`)).total, 1, 'listed under the error type')

  // The served request after it is billed (the newest consume row); the refusal added nothing.
  const charged = (await adminLogs(`type=${LOG_TYPE.consume}&model_name=gpt-4o-mini`)).items[0]!.quota
  t.ok(charged > 0, 'the served request was charged')
  t.same(await balances(), {
    user: { quota: before.user.quota - charged, used_quota: before.user.used_quota + charged, request_count: before.user.request_count + 1 },
    token: { remain_quota: before.token.remain_quota - charged, used_quota: before.token.used_quota + charged }
  }, 'the user\'s quota, used quota and request count and the token\'s remaining quota moved only by the served request')
  t.same(await buckets('house-model'), [], 'no dashboard (quota_data) row for the refusal')
  t.equal(upstream.calls - callsBefore, 1, 'the refusal never reached the upstream')

  const mine = await self.call<LogPage>('GET', '/api/log/self/?p=1&page_size=100&model_name=house-model')
  t.equal(mine.total, 1, 'the user sees their own refused request')
  t.match(mine.items[0], { type: LOG_TYPE.error, quota: 0, content: NOT_PRICED, model_name: 'house-model', token_name: 'refusee-key' })
  t.notOk('channel_id' in mine.items[0]!, 'without the channel')
  t.notOk('admin_info' in (mine.items[0]!.other ?? {}), 'without the admin details')
})

t.test('on: a bad key is never logged', async (t) => {
  t.ok(await gatewaySees(true))
  const total = (await adminLogs('')).total
  const bad = await chat('house-model', `sk-${'0'.repeat(48)}`)
  t.equal(bad.status, 401)
  t.equal((await chat('gpt-4o-mini')).status, 200)
  t.ok(await until(async () => (await adminLogs('')).total === total + 1, 30_000), 'the served request after it is logged')
  t.equal((await adminLogs('')).total, total + 1, 'and nothing for the bad key')
  t.equal((await adminLogs(`type=${LOG_TYPE.error}`)).total, 1, 'the only error row is the earlier refusal')
})
