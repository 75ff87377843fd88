import { OPTION_DEFAULTS, SECRET_OPTIONS } from '@modelgate/contracts'
import t from 'tap'
import { build, login, ROOT, sharedEnv, verifySession } from './helpers.js'

t.test('the super admin reads every option; credentials only say whether they are set', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const put = async (key: string, value: unknown) =>
    (await app.inject({ method: 'PUT', url: '/api/option/', headers: { ...root.headers, 'accept-language': 'en' }, payload: { key, value } })).json()
  // Setting a credential needs a fresh secure verification (test/two-factor.test.ts).
  await verifySession(app, root.headers, ROOT.password)
  t.equal((await put('SMTPToken', 'smtp-secret-value')).success, true)
  t.equal((await put('GitHubClientSecret', 'gh-secret-value')).success, true)
  const res = await app.inject({ url: '/api/option/', headers: root.headers })
  const items = res.json().data as Array<{ key: string, value: string, is_set?: boolean }>
  t.same(items.map((i) => i.key).sort(), Object.keys(OPTION_DEFAULTS).sort(), 'every key of the specification, with defaults')
  t.equal(items.find((i) => i.key === 'QuotaPerUnit')?.value, '500000')
  t.equal(items.find((i) => i.key === 'Price')?.value, '7.3')
  for (const key of SECRET_OPTIONS) t.equal(items.find((i) => i.key === key)?.value, '', `${key} is not sent back`)
  t.equal(items.find((i) => i.key === 'SMTPToken')?.is_set, true)
  t.equal(items.find((i) => i.key === 'EpayKey')?.is_set, false)
  t.notMatch(res.body, 'smtp-secret-value')
  t.notMatch(res.body, 'gh-secret-value')
})

t.test('option values are validated and normalised', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const put = async (key: string, value: unknown) =>
    (await app.inject({ method: 'PUT', url: '/api/option/', headers: { ...root.headers, 'accept-language': 'en' }, payload: { key, value } })).json()
  const stored = async (key: string) => (await app.db.selectFrom('options').select('value').where('key', '=', key).executeTakeFirst())?.value

  for (const key of ['GroupRatio', 'UserUsableGroups', 'ModelPrice', 'ModelRatio', 'CompletionRatio', 'Chats', 'TopupGroupRatio']) {
    const res = await put(key, '{not json')
    t.equal(res.success, false, `${key} must be valid JSON`)
    t.match(res.message, /must be valid JSON/)
  }
  t.match((await put('GroupRatio', '{"default":-1}')).message, /default: expected a number >= 0/)
  t.match((await put('GroupRatio', '[1,2]')).message, /expected a JSON object/)
  t.equal((await put('GroupRatio', '{"default":1,"vip":1.5}')).success, true)
  t.equal(await stored('GroupRatio'), '{"default":1,"vip":1.5}')
  t.match((await put('Chats', '{"a":1}')).message, /expected a JSON array/)

  t.match((await put('QuotaForNewUser', '-5')).message, /whole number between 0/)
  t.match((await put('Price', 'abc')).message, /number of at least 0/)
  t.match((await put('DataExportInterval', '0')).message, /between 1 and 1440/)
  t.equal((await put('DataExportInterval', 5)).success, true, 'numbers may be sent as numbers')
  t.match((await put('DataExportDefaultTime', 'month')).message, /one of hour, day, week/)
  t.match((await put('RegisterEnabled', 'yes')).message, /true or false/)
  t.equal((await put('RegisterEnabled', false)).success, true)
  t.equal(await stored('RegisterEnabled'), 'false')
  t.match((await put('NoSuchOption', 'x')).message, /Unknown option NoSuchOption/)

  t.match((await put('PayAddress', 'https://pay.example.com')).message, /server address before the payment settings/)
  t.equal((await put('ServerAddress', 'https://gw.example.com///')).success, true)
  t.equal(await stored('ServerAddress'), 'https://gw.example.com', 'trailing slashes are stripped')
  t.equal((await put('PayAddress', 'https://pay.example.com/')).success, true)
  t.equal(await stored('PayAddress'), 'https://pay.example.com')
  t.match((await put('WorkerUrl', 'ftp://x')).message, /http\(s\) address/)
  t.equal((await put('EmailDomainWhitelist', 'gmail.com, ,QQ.com,gmail.com,')).success, true)
  t.equal(await stored('EmailDomainWhitelist'), 'gmail.com,qq.com', 'empty and duplicate domains dropped')

  const status = (await app.inject('/api/status')).json().data
  t.equal(status.server_address, 'https://gw.example.com', '/api/status reflects the options')
  t.equal(status.register_enabled, false)

  // The content pages are public and follow their options.
  t.equal((await put('Notice', '**Maintenance** tonight')).success, true)
  t.equal((await put('About', 'https://about.example.com')).success, true)
  t.same((await app.inject('/api/notice')).json(), { success: true, message: '', data: '**Maintenance** tonight' })
  t.equal((await app.inject('/api/about')).json().data, 'https://about.example.com')
  t.equal((await app.inject('/api/home_page_content')).json().data, '')
})

t.test('ErrorLogEnabled is off by default and stored as true or false', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const put = async (value: unknown) =>
    (await app.inject({ method: 'PUT', url: '/api/option/', headers: { ...root.headers, 'accept-language': 'en' }, payload: { key: 'ErrorLogEnabled', value } })).json()
  const read = async () => ((await app.inject({ url: '/api/option/', headers: root.headers })).json().data as Array<{ key: string, value: string }>).find((i) => i.key === 'ErrorLogEnabled')?.value
  t.equal(await read(), 'false', 'off by default')
  t.match((await put('on')).message, /ErrorLogEnabled must be true or false/)
  t.equal((await put(true)).success, true)
  t.equal(await read(), 'true', 'read back as new-api\'s string')
  t.equal((await app.loadOptions()).bool('ErrorLogEnabled'), true)
  t.equal((await put('false')).success, true)
  t.equal(await read(), 'false')
})

t.test('restoring model ratios brings back the defaults', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  await app.inject({ method: 'PUT', url: '/api/option/', headers: root.headers, payload: { key: 'ModelRatio', value: '{"gpt-4o":99}' } })
  t.equal((await app.loadOptions()).str('ModelRatio'), '{"gpt-4o":99}')
  const res = await app.inject({ method: 'POST', url: '/api/option/rest_model_ratio', headers: root.headers })
  t.equal(res.json().success, true)
  const ratios = (await app.loadOptions()).json('ModelRatio') as Record<string, number>
  t.equal(ratios['gpt-4o'], 1.25)
})

t.test('an option change reaches another replica within a second', async (t) => {
  const env = await sharedEnv(t)
  const a = await build(t, {}, env)
  const b = await build(t, {}, env)
  t.equal((await b.inject('/api/status')).json().data.system_name, 'ModelGate', 'b has cached the old value')
  const root = await login(a, ROOT.username, ROOT.password)
  const started = Date.now()
  await a.inject({ method: 'PUT', url: '/api/option/', headers: root.headers, payload: { key: 'SystemName', value: 'Renamed' } })
  let name = ''
  while (Date.now() - started < 1000 && name !== 'Renamed') {
    name = (await b.inject('/api/status')).json().data.system_name
    if (name !== 'Renamed') await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.equal(name, 'Renamed', `seen on the other replica after ${Date.now() - started} ms`)
})

t.test('admins get the default models of every channel type', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const models = (await app.inject({ url: '/api/models', headers: root.headers })).json().data
  t.ok(models['1'].includes('gpt-4o-mini'), 'OpenAI')
  t.ok(models['43'].includes('deepseek-chat'), 'DeepSeek')
  const types = (await app.inject({ url: '/api/models/types', headers: root.headers })).json().data
  t.equal(types['14'], 'Claude')
})

t.test('admins get the names of the priced models: a ratio or a per-call price', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const put = async (key: string, value: string) =>
    (await app.inject({ method: 'PUT', url: '/api/option/', headers: root.headers, payload: { key, value } })).json()
  t.equal((await put('ModelRatio', JSON.stringify({ 'ratio-model': 2.5 }))).success, true)
  t.equal((await put('ModelPrice', JSON.stringify({ 'call-model': 0.02, 'ratio-model': 0.1 }))).success, true)
  const res = await app.inject({ url: '/api/models/priced', headers: root.headers })
  t.same(res.json(), { success: true, message: '', data: ['call-model', 'ratio-model'] }, 'each once, sorted')
  t.equal((await app.inject({ url: '/api/models/priced' })).statusCode, 401, 'not for visitors')
})

t.test('admins see the usage events the billing worker gave up on, with the reason', async (t) => {
  const env = await sharedEnv(t)
  const app = await build(t, {}, env)
  const root = await login(app, ROOT.username, ROOT.password)
  const { Queue, Worker, UnrecoverableError } = await import('bullmq')
  const { bullConnection } = await import('@modelgate/service')
  const { USAGE_QUEUE } = await import('@modelgate/contracts')
  const connection = bullConnection(env.REDIS_URL!)
  const prefix = `${env.REDIS_KEY_PREFIX}bull`
  const queue = new Queue(USAGE_QUEUE, { connection, prefix })
  t.teardown(() => queue.close())
  await queue.add('settle', { broken: true }, { jobId: 'poison-1' })
  await queue.add('settle-batch', { events: [{ request_id: 'ok' }, { broken: 2 }] }, { jobId: 'poison-2' })
  const worker = new Worker(USAGE_QUEUE, async () => { throw new UnrecoverableError('malformed usage event: /request_id required') }, { connection, prefix })
  let failed = 0
  await new Promise<void>((resolve) => worker.on('failed', () => { if (++failed === 2) resolve() }))
  await worker.close()
  const res = await app.inject({ url: '/api/usage/failed', headers: root.headers })
  t.match(res.json().data, { total: 2 })
  const byId = Object.fromEntries(res.json().data.items.map((i: { id: string }) => [i.id, i]))
  t.match(byId['poison-1'], { reason: /malformed usage event/, events: [{ broken: true }] }, 'a bare event is listed as itself')
  t.match(byId['poison-2'], { events: [{ request_id: 'ok' }, { broken: 2 }] }, 'a batch lists its events')
})
