import { type Database, type Kysely, updateUnfinishedTask } from '@modelgate/db'
import { type ChannelConfig, midjourneyPoll, mjActionOfCustomId, mjSimpleChange, readMjSubmit } from '@modelgate/providers'
import { QuotaStore } from '@modelgate/quota'
import { fakeMidjourney, type FakeMidjourney } from '@modelgate/testing'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, seedUser, setOptions, settle, usageEvents } from './fixtures.js'

type MjBody = { code: number, description: string, result: unknown, properties?: Record<string, unknown> }
type Answer<B = MjBody> = { status: number, body: B }
type TaskDto = { id: string, action: string, status: string, progress: string, imageUrl: string, failReason: string, prompt: string, submitTime: number, finishTime: number, buttons: Array<{ customId: string, label: string }> }

async function call<B = MjBody> (base: string, key: string, method: 'GET' | 'POST', path: string, body?: unknown, header: 'authorization' | 'mj-api-secret' = 'authorization'): Promise<Answer<B>> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { [header]: header === 'authorization' ? `Bearer ${key}` : key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, body: await res.json() as B }
}

const channelOf = (fake: FakeMidjourney, key = fake.key, type = 2): ChannelConfig => ({ id: 1, type, key, baseUrl: fake.url, other: '', organization: null, setting: {} })

/** Asks the fake about `ids` with the protocol's own poll requests, as the billing worker does. */
async function poll (fake: FakeMidjourney, ids: string[], key = fake.key) {
  const requests = midjourneyPoll.pollRequests(channelOf(fake, key), ids)
  const reports = []
  for (const up of requests) {
    const res = await fetch(up.url, { method: up.method, headers: up.headers, ...(up.body === undefined ? {} : { body: up.body }) })
    reports.push(...midjourneyPoll.readPoll(res.status, Buffer.from(await res.arrayBuffer()), ids))
  }
  return { requests, reports }
}

/** Writes what the upstream reports now into the task rows, as the worker's poller does for unfinished tasks. */
async function applyPoll (app: FastifyInstance, fake: FakeMidjourney, ids: string[]): Promise<void> {
  const { reports } = await poll(fake, ids)
  for (const r of reports) {
    const rows = await app.db.selectFrom('midjourneys').select('id').where('mj_id', '=', r.upstreamId).execute()
    for (const row of rows) {
      await updateUnfinishedTask(app.db, 'midjourneys', row.id, { ...r.fields, status: r.status, ...(r.progress === undefined ? {} : { progress: r.progress }) })
    }
  }
}

const MODELS = ['mj_imagine', 'mj_upload', 'mj_upscale', 'mj_variation', 'mj_reroll', 'mj_custom_zoom', 'mj_modal', 'mj_describe']

async function setup (t: Test, opts: { channelKey?: string, group?: string, type?: number, models?: string[], remain?: number } = {}) {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeMidjourney(t)
  const channel = await seedChannel(app.db, { type: opts.type ?? 2, baseUrl: upstream.url, models: opts.models ?? MODELS, key: opts.channelKey ?? upstream.key, groups: ['default', 'vip'] })
  await setOptions(app.db, { ServerAddress: url, ModelPrice: { mj_imagine: 0.2, mj_upscale: 0.05, mj_variation: 0.1, mj_reroll: 0.1, mj_custom_zoom: 0, mj_modal: 0.1, mj_describe: 0.05, mj_relax_imagine: 0.05, mj_fast_imagine: 0.3, mj_upload: 0.01 } })
  await reload(app)
  const user = await seedUser(app.db, { quota: 10_000_000, group: opts.group ?? 'default' })
  const token = await seedToken(app.db, user.id, { remain: opts.remain ?? 5_000_000 })
  return { app, url, upstream, channel, user, token }
}

const pgUser = async (db: Kysely<Database>, id: number) => (await db.selectFrom('users').select(['quota', 'used_quota']).where('id', '=', id).executeTakeFirstOrThrow())
const pgToken = async (db: Kysely<Database>, id: number) => (await db.selectFrom('tokens').select('remain_quota').where('id', '=', id).executeTakeFirstOrThrow()).remain_quota
const userEvents = async (app: FastifyInstance, userId: number) => (await usageEvents(app)).filter((e) => e.user_id === userId)

t.test('an imagine is submitted, charged ModelPrice x QuotaPerUnit x group ratio once, and fetched to success from Postgres', async (t) => {
  const { app, url, upstream, channel, user, token } = await setup(t, { group: 'vip' })
  // $0.2 x 500000 x 1.5 = 150000 quota.
  await setOptions(app.db, { GroupRatio: { default: 1, vip: 1.5 } })
  await reload(app)
  const body = { prompt: 'a red fox --v 6', base64Array: [], state: 'my-state', botType: 'MID_JOURNEY', custom_field: 7 }
  // Midjourney-Proxy clients send the gateway key as mj-api-secret.
  const res = await call(url, token.key, 'POST', '/mj/submit/imagine', body, 'mj-api-secret')
  t.equal(res.status, 200)
  t.match(res.body, { code: 1, description: 'Submit success' })
  const id = res.body.result as string
  t.ok(upstream.tasks.has(id), 'the answer carries the upstream task id')
  const submits = upstream.submits('imagine')
  t.equal(submits.length, 1)
  t.equal(submits[0]!.headers['mj-api-secret'], upstream.key, 'the channel key went upstream as mj-api-secret')
  t.equal(submits[0]!.mode, undefined)
  t.same(submits[0]!.body, body, 'the body went through untouched')

  const row = await app.db.selectFrom('midjourneys').selectAll().where('mj_id', '=', id).executeTakeFirstOrThrow()
  t.match(row, { action: 'IMAGINE', status: 'SUBMITTED', code: 1, user_id: user.id, token_id: token.row.id, channel_id: channel.id, quota: 150000, model_name: 'mj_imagine', group: 'vip', prompt: 'a red fox --v 6', state: 'my-state' })
  const events = await userEvents(app, user.id)
  t.equal(events.length, 1, 'one usage event')
  t.match(events[0], { quota: 150000, reserved: 150000, outcome: 'success', model_name: 'mj_imagine', channel_id: channel.id, request_id: row.request_id })
  await settle(app, events)
  t.same(await pgUser(app.db, user.id), { quota: 10_000_000 - 150000, used_quota: 150000 }, 'the user paid once')
  t.equal(await pgToken(app.db, token.row.id), 5_000_000 - 150000, 'and so did the token')

  upstream.progress(id, '40%')
  await applyPoll(app, upstream, [id])
  const running = await call<TaskDto>(url, token.key, 'GET', `/mj/task/${id}/fetch`)
  t.match(running, { status: 200, body: { id, action: 'IMAGINE', status: 'IN_PROGRESS', progress: '40%', imageUrl: '' } })
  t.equal(running.body.submitTime, row.submit_time * 1000, 'times in ms')
  upstream.succeed(id)
  await applyPoll(app, upstream, [id])
  const done = await call<TaskDto>(url, token.key, 'GET', `/mj/task/${id}/fetch`)
  t.match(done.body, { id, status: 'SUCCESS', progress: '100%', failReason: '' })
  t.ok(done.body.finishTime > 0)
  t.same(done.body.buttons.map((b) => b.label).slice(0, 4), ['U1', 'U2', 'U3', 'U4'], 'the buttons of the finished grid')
  t.ok(done.body.imageUrl.startsWith(`${url}/mj/image/${id}?sig=`), 'MjForwardUrlEnabled: the image through the gateway')
  const list = await call<TaskDto[]>(url, token.key, 'POST', '/mj/task/list-by-condition', { ids: [id, 'no-such-task'] })
  t.same(list.body.map((x) => [x.id, x.status]), [[id, 'SUCCESS']], 'list-by-condition: known tasks only')
  t.equal(upstream.requests.filter((r) => r.route.endsWith('/fetch')).length, 0, 'client fetches are answered from Postgres')
  t.equal((await userEvents(app, user.id)).length, 1, 'no second charge')
})

t.test('an upload answers the image URLs, is charged once and is recorded finished (nothing to poll)', async (t) => {
  const { app, url, upstream, user, token } = await setup(t)
  const res = await call(url, token.key, 'POST', '/mj/submit/upload-discord-images', { base64Array: ['data:image/png;base64,AAAA', 'data:image/png;base64,BBBB'] })
  t.match(res, { status: 200, body: { code: 1, result: [`${upstream.url}/images/upload-0.png`, `${upstream.url}/images/upload-1.png`] } })
  const row = await app.db.selectFrom('midjourneys').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow()
  t.match(row, { action: 'UPLOAD', status: 'SUCCESS', progress: '100%', model_name: 'mj_upload', quota: 5000, mj_id: /^upload-/ })
  t.match(await userEvents(app, user.id), [{ model_name: 'mj_upload', quota: 5000, outcome: 'success' }])
})

t.test('refused submits charge nothing, record no task and release the reservation', async (t) => {
  const { app, url, upstream, token, user } = await setup(t)
  const quota = new QuotaStore(app.redis)
  upstream.script({ code: 24, description: 'Banned prompt: gore' })
  const banned = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'gore' })
  t.same(banned, { status: 200, body: { code: 24, description: 'Banned prompt: gore', result: null, properties: {} } }, 'the upstream refusal as Midjourney-Proxy sent it')
  upstream.script({ code: 23, description: 'queue is full' })
  const full = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'cat' })
  t.match(full, { status: 200, body: { code: 23, description: 'queue is full' } })
  // The fake itself refuses an empty prompt with code 4.
  const invalid = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: '' })
  t.match(invalid, { status: 200, body: { code: 4 } })
  t.equal(upstream.submits().length, 3, 'each tried once: the client erred')
  t.equal((await app.db.selectFrom('midjourneys').select('id').execute()).length, 0, 'no task row')
  const events = await userEvents(app, user.id)
  t.equal(events.length, 3)
  t.ok(events.every((e) => e.quota === 0 && e.reserved === 100000 && e.outcome === 'failed'), 'nothing charged')
  await settle(app, events)
  t.equal(await quota.balance('token', token.row.id, token.row.user_id), 5_000_000, 'the reservations are released in Redis')
  t.equal(await pgToken(app.db, token.row.id), 5_000_000, 'nothing charged in Postgres')
  t.same(await pgUser(app.db, user.id), { quota: 10_000_000, used_quota: 0 })
})

t.test('a submit refused with HTTP 500 fails over to the next channel', async (t) => {
  const { app, url, upstream: broken, channel: first, token, user } = await setup(t)
  const healthy = await fakeMidjourney(t, { key: 'second-key' })
  await app.db.updateTable('channels').set({ priority: 10 }).where('id', '=', first.id).execute()
  const second = await seedChannel(app.db, { type: 5, baseUrl: healthy.url, models: ['mj_imagine'], key: healthy.key, priority: 0 })
  await setOptions(app.db, { RetryTimes: '2' })
  await reload(app)
  broken.script({ http: 500 })
  const res = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'p' })
  t.equal(res.body.code, 1)
  t.equal(broken.submits().length, 1, 'the first channel was tried')
  t.ok(healthy.tasks.has(res.body.result as string), 'the second took it')
  t.equal(healthy.submits()[0]!.headers['mj-api-secret'], 'second-key')
  const row = await app.db.selectFrom('midjourneys').selectAll().where('mj_id', '=', res.body.result as string).executeTakeFirstOrThrow()
  t.equal(row.channel_id, second.id)
  const events = await userEvents(app, user.id)
  t.equal(events.length, 1)
  t.match(events[0], { quota: 100000, channel_id: second.id, retried_channels: [first.id] })
})

t.test('a wrong channel key fails (401 upstream) and charges nothing; insufficient quota is refused before any upstream call', async (t) => {
  const { app, url, upstream, channel, token, user } = await setup(t, { channelKey: 'not-the-key' })
  const res = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'p' })
  t.not(res.status, 200)
  t.ok(res.status >= 500, 'a failure of ours, not the client\'s')
  t.equal(res.body.code, 9)
  t.equal(typeof res.body.description, 'string')
  t.equal(upstream.requests.length, 1)
  t.equal(upstream.requests[0]!.authorized, false, 'the fake saw the wrong key')
  t.equal(upstream.tasks.size, 0)
  t.match(await userEvents(app, user.id), [{ quota: 0, outcome: 'failed' }])
  const ch = await app.db.selectFrom('channels').select('status').where('id', '=', channel.id).executeTakeFirstOrThrow()
  t.not(ch.status, 1, 'the channel with a rejected key is disabled')

  const poor = await seedUser(app.db, { quota: 10_000_000 })
  const poorToken = await seedToken(app.db, poor.id, { remain: 1000 })
  await app.db.updateTable('channels').set({ status: 1 }).where('id', '=', channel.id).execute()
  await reload(app)
  const before = upstream.requests.length
  const refused = await call(url, poorToken.key, 'POST', '/mj/submit/imagine', { prompt: 'p' })
  t.match(refused, { status: 403, body: { code: 4, description: 'Insufficient API key quota', result: null } })
  t.equal(upstream.requests.length, before, 'no upstream call')
  t.equal((await userEvents(app, poor.id)).length, 0, 'not admitted: no usage event')

  const noKey = await fetch(`${url}/mj/submit/imagine`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"p"}' })
  t.equal(noKey.status, 401)
  t.match(await noKey.json(), { code: 4, result: null })
  const badKey = await call(url, 'sk-nonexistent0000000000000000', 'POST', '/mj/submit/imagine', { prompt: 'p' })
  t.match(badKey, { status: 401, body: { code: 4, description: 'Invalid API key' } })
})

t.test('mode routes: Plus channels take the mode in the path; plain ones in the prompt; billed as the mode model when served', async (t) => {
  const { app, url, upstream, user, token } = await setup(t, { type: 5, models: ['mj_imagine', 'mj_relax_imagine'] })
  const relax = await call(url, token.key, 'POST', '/relax/mj/submit/imagine', { prompt: 'cat' })
  t.equal(relax.body.code, 1)
  const fast = await call(url, token.key, 'POST', '/fast/mj/submit/imagine', { prompt: 'dog' })
  t.equal(fast.body.code, 1)
  const [r, f] = upstream.submits('imagine')
  t.match(r, { mode: 'relax', path: '/mj-relax/mj/submit/imagine', body: { prompt: 'cat' } })
  t.match(f, { mode: 'fast', path: '/mj-fast/mj/submit/imagine', body: { prompt: 'dog' } })
  const events = await userEvents(app, user.id)
  t.same(events.map((e) => [e.model_name, e.quota]).sort(), [['mj_imagine', 100000], ['mj_relax_imagine', 25000]], 'mj_relax_imagine is served; mj_fast_imagine is not, so mj_imagine')
  const fetched = await call<TaskDto>(url, token.key, 'GET', `/relax/mj/task/${relax.body.result as string}/fetch`)
  t.equal(fetched.body.id, relax.body.result, 'fetch under the mode prefix')

  // A plain Midjourney-Proxy channel: the mode as a prompt flag, unless the prompt names one.
  const plain = await fakeMidjourney(t, { key: 'plain-key' })
  await app.db.updateTable('channels').set({ status: 2 }).execute()
  await seedChannel(app.db, { type: 2, baseUrl: plain.url, models: ['mj_imagine'], key: plain.key })
  await reload(app)
  await call(url, token.key, 'POST', '/turbo/mj/submit/imagine', { prompt: 'cat' })
  await call(url, token.key, 'POST', '/turbo/mj/submit/imagine', { prompt: 'cat --relax' })
  t.same(plain.submits('imagine').map((s) => [s.path, (s.body as { prompt: string }).prompt]), [['/mj/submit/imagine', 'cat --turbo'], ['/mj/submit/imagine', 'cat --relax']])

  // MjModeClearEnabled strips the client's flags (the route's mode is still added on type 2).
  await setOptions(app.db, { MjModeClearEnabled: 'true' })
  await reload(app)
  await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'cat --fast --v 6' })
  await call(url, token.key, 'POST', '/turbo/mj/submit/imagine', { prompt: 'cat --relax' })
  t.same(plain.submits('imagine').slice(2).map((s) => (s.body as { prompt: string }).prompt), ['cat --v 6', 'cat --turbo'])
})

t.test('follow-ups: the caller\'s own task, on its channel, finished when MjActionCheckSuccessEnabled', async (t) => {
  const { app, url, upstream, channel, user, token } = await setup(t)
  // A second channel of higher priority: follow-ups must still go where the task is.
  const other = await fakeMidjourney(t, { key: 'other-key' })
  const imagine = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'fox' })
  const id = imagine.body.result as string
  await seedChannel(app.db, { type: 2, baseUrl: other.url, models: MODELS, key: other.key, priority: 10 })
  await reload(app)

  const early = await call(url, token.key, 'POST', '/mj/submit/action', { taskId: id, customId: `MJ::JOB::upsample::1::${id}` })
  t.match(early, { status: 400, body: { code: 4, result: null } }, 'refused while the task is not SUCCESS')
  t.equal(upstream.submits('action').length, 0, 'no upstream call')

  upstream.succeed(id)
  await applyPoll(app, upstream, [id])
  const up = await call(url, token.key, 'POST', '/mj/submit/action', { taskId: id, customId: `MJ::JOB::upsample::1::${id}` })
  t.equal(up.body.code, 1)
  t.equal(upstream.submits('action').length, 1, 'the action went to the task\'s channel')
  t.equal(other.submits('action').length, 0, 'not to the other one')
  const change = await call(url, token.key, 'POST', '/mj/submit/change', { taskId: id, action: 'VARIATION', index: 2 })
  t.equal(change.body.code, 1)
  const simple = await call(url, token.key, 'POST', '/mj/submit/simple-change', { content: `${id} U3` })
  t.equal(simple.body.code, 1)
  const rows = await app.db.selectFrom('midjourneys').select(['mj_id', 'action', 'model_name', 'quota', 'channel_id']).where('user_id', '=', user.id).orderBy('id').execute()
  t.same(rows.map((r) => [r.action, r.model_name, r.quota, r.channel_id]), [
    ['IMAGINE', 'mj_imagine', 100000, channel.id], ['UPSCALE', 'mj_upscale', 25000, channel.id], ['VARIATION', 'mj_variation', 50000, channel.id], ['UPSCALE', 'mj_upscale', 25000, channel.id]
  ])

  // Custom zoom opens a modal (code 21, status MODAL); the modal submit completes it.
  const zoom = await call(url, token.key, 'POST', '/mj/submit/action', { taskId: id, customId: `MJ::CustomZoom::${id}` })
  t.equal(zoom.body.code, 21)
  const zid = zoom.body.result as string
  t.equal((await app.db.selectFrom('midjourneys').select('status').where('mj_id', '=', zid).executeTakeFirstOrThrow()).status, 'MODAL')
  const modal = await call(url, token.key, 'POST', '/mj/submit/modal', { taskId: zid, prompt: 'fox --zoom 2' })
  t.match(modal.body, { code: 1, result: zid })
  const zoomEvents = (await userEvents(app, user.id)).filter((e) => e.model_name === 'mj_custom_zoom' || e.model_name === 'mj_modal')
  t.same(zoomEvents.map((e) => [e.model_name, e.quota, e.outcome]).sort(), [['mj_custom_zoom', 0, 'success'], ['mj_modal', 50000, 'success']], 'the zoom and its modal, each billed once')
  const zfetch = await call<TaskDto>(url, token.key, 'GET', `/mj/task/${zid}/fetch`)
  t.match(zfetch.body, { id: zid, action: 'MODAL', status: 'SUBMITTED' }, 'the latest row of the id answers')

  // Another user cannot act on the task: it answers like a missing one.
  const stranger = await seedUser(app.db)
  const strangerToken = await seedToken(app.db, stranger.id)
  const theirs = await call(url, strangerToken.key, 'POST', '/mj/submit/action', { taskId: id, customId: `MJ::JOB::upsample::2::${id}` })
  const missing = await call(url, strangerToken.key, 'POST', '/mj/submit/action', { taskId: 'no-such-task', customId: 'MJ::JOB::upsample::2::x' })
  t.same(theirs, missing)
  t.match(theirs, { status: 404, body: { code: 3 } })
  t.equal((await userEvents(app, stranger.id)).length, 0)

  // Without the check, an action on an unfinished task is passed on.
  await setOptions(app.db, { MjActionCheckSuccessEnabled: 'false' })
  await reload(app)
  const fresh = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'owl' })
  const anyway = await call(url, token.key, 'POST', '/mj/submit/action', { taskId: fresh.body.result, customId: `MJ::JOB::variation::1::${fresh.body.result as string}` })
  t.equal(anyway.body.code, 1)
  // The fresh task went to the higher-priority channel; its action follows it there.
  t.ok(other.tasks.has(fresh.body.result as string))
  t.equal(other.task(anyway.body.result as string)?.action, 'VARIATION', 'the action went to the fresh task\'s channel')
  const unknown = await call(url, token.key, 'POST', '/mj/submit/action', { taskId: id, customId: 'MJ::Nothing::1' })
  t.match(unknown, { status: 400, body: { code: 4 } }, 'a customId of no known action')
})

t.test('MjAccountFilterEnabled and MjNotifyEnabled shape what goes upstream', async (t) => {
  const { app, url, upstream, token, user } = await setup(t)
  const body = { prompt: 'p', accountFilter: { remark: 'lzn' }, notifyHook: 'https://hooks.example.com/mj' }
  await call(url, token.key, 'POST', '/mj/submit/imagine', body)
  t.same(upstream.submits()[0]!.body, { prompt: 'p' }, 'both off: accountFilter and notifyHook dropped')

  await setOptions(app.db, { MjAccountFilterEnabled: 'true', MjNotifyEnabled: 'true' })
  await reload(app)
  await call(url, token.key, 'POST', '/mj/submit/imagine', body)
  t.same(upstream.submits()[1]!.body, body, 'both on: kept')

  for (const hook of ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest', 'ftp://hooks.example.com/x', 'not a url', 42]) {
    const res = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'p', notifyHook: hook })
    t.match(res, { status: 400, body: { code: 4, result: null } }, `refused: ${String(hook)}`)
  }
  t.equal(upstream.submits().length, 2, 'refused hooks made no upstream call')
  t.equal((await userEvents(app, user.id)).length, 2, 'nor a charge')
})

t.test('fetch, list-by-condition, image-seed and the image are the caller\'s own', async (t) => {
  const { app, url, upstream, token } = await setup(t)
  const other = await seedUser(app.db)
  const otherToken = await seedToken(app.db, other.id)
  const mine = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'mine' })
  const theirs = await call(url, otherToken.key, 'POST', '/mj/submit/imagine', { prompt: 'theirs' })
  const [a, b] = [mine.body.result as string, theirs.body.result as string]

  const guessed = await call(url, otherToken.key, 'GET', `/mj/task/${a}/fetch`)
  const missing = await call(url, otherToken.key, 'GET', '/mj/task/1700000000000000/fetch')
  t.same(guessed, missing, 'another user\'s id answers like a missing one')
  t.match(guessed, { status: 404, body: { code: 3, result: null } })
  const list = await call<TaskDto[]>(url, otherToken.key, 'POST', '/mj/task/list-by-condition', { ids: [a, b] })
  t.same(list.body.map((x) => x.id), [b], 'only their own task')
  t.same((await call<TaskDto[]>(url, token.key, 'POST', '/mj/task/list-by-condition', { ids: [b, a] })).body.map((x) => x.id), [a])
  t.same((await call<TaskDto[]>(url, token.key, 'POST', '/mj/task/list-by-condition', {})).body, [], 'no ids: nothing')

  upstream.succeed(a)
  await applyPoll(app, upstream, [a])
  const seed = await call(url, token.key, 'GET', `/mj/task/${a}/image-seed`)
  t.same(seed, { status: 200, body: { code: 1, description: 'success', result: `seed-${a}` } }, 'image-seed from the task\'s channel')
  const seedReq = upstream.requests.find((r) => r.route === `/task/${a}/image-seed`)
  t.equal(seedReq?.headers['mj-api-secret'], upstream.key)
  t.match(await call(url, otherToken.key, 'GET', `/mj/task/${a}/image-seed`), { status: 404, body: { code: 3 } })

  // The image proxy: MjForwardUrlEnabled (default) answers the gateway's URL, which streams the image.
  const done = await call<TaskDto>(url, token.key, 'GET', `/mj/task/${a}/fetch`)
  const image = await fetch(done.body.imageUrl)
  t.equal(image.status, 200)
  t.equal(image.headers.get('content-type'), 'image/png')
  t.same(Buffer.from(await image.arrayBuffer()), upstream.imageBytes, 'the upstream image, byte for byte')
  t.equal((await fetch(`${url}/mj/image/${a}`)).status, 404, 'the bare id is not enough')
  t.equal((await fetch(`${url}/mj/image/${a}?sig=${'0'.repeat(32)}`)).status, 404, 'nor a guessed signature')
  await setOptions(app.db, { MjForwardUrlEnabled: 'false' })
  await reload(app)
  const direct = await call<TaskDto>(url, token.key, 'GET', `/mj/task/${a}/fetch`)
  t.equal(direct.body.imageUrl, `${upstream.url}/images/${a}.png`, 'forwarding off: the upstream URL')
})

t.test('/mj/notify only makes the pollers look again; its content is not trusted', async (t) => {
  const { app, url, token } = await setup(t)
  const sub = await call(url, token.key, 'POST', '/mj/submit/imagine', { prompt: 'p' })
  const id = sub.body.result as string
  await app.db.updateTable('midjourneys').set({ lease_until: Date.now() + 60_000 }).where('mj_id', '=', id).execute()
  const res = await fetch(`${url}/mj/notify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, status: 'SUCCESS', imageUrl: 'http://evil.example/x.png', progress: '100%' }) })
  t.equal(res.status, 200)
  const row = await app.db.selectFrom('midjourneys').select(['status', 'image_url', 'lease_until']).where('mj_id', '=', id).executeTakeFirstOrThrow()
  t.same(row, { status: 'SUBMITTED', image_url: '', lease_until: 0 }, 'claim released, nothing written from the callback')
  t.equal((await fetch(`${url}/mj/notify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":{"$ne":1}}' })).status, 200, 'junk answers 200 too')
})

t.test('midjourneyPoll reads Midjourney-Proxy\'s task list (unit level, against the fake)', async (t) => {
  const upstream = await fakeMidjourney(t)
  const h = { 'mj-api-secret': upstream.key, 'content-type': 'application/json' }
  const ids: string[] = []
  for (const prompt of ['a', 'b', 'c']) {
    const res = await fetch(`${upstream.url}/mj/submit/imagine`, { method: 'POST', headers: h, body: JSON.stringify({ prompt }) })
    ids.push(((await res.json()) as MjBody).result as string)
  }
  const [a, b, c] = ids as [string, string, string]
  upstream.progress(a, '30%')
  upstream.succeed(b)
  upstream.fail(c, 'Banned prompt detected')
  const { requests, reports } = await poll(upstream, [...ids, 'unknown-id'])
  t.equal(requests.length, 1, 'one batch request')
  t.match(requests[0], { method: 'POST', url: `${upstream.url}/mj/task/list-by-condition`, headers: { 'mj-api-secret': upstream.key } })
  t.same(JSON.parse(requests[0]!.body as string), { ids: [...ids, 'unknown-id'] })
  const byId = new Map(reports.map((r) => [r.upstreamId, r]))
  t.equal(reports.length, 3, 'unknown ids are left out')
  t.match(byId.get(a), { status: 'IN_PROGRESS', progress: '30%' })
  t.notOk(byId.get(a)?.failReason)
  const success = byId.get(b)!
  t.match(success, { status: 'SUCCESS', progress: '100%', fields: { image_url: `${upstream.url}/images/${b}.png` } })
  t.equal(success.fields['finish_time'], Math.floor(upstream.task(b)!.finishTime / 1000), 'finish time in seconds')
  t.equal(JSON.parse(success.fields['buttons'] as string).length, 9, 'buttons as JSON text for jsonb')
  t.match(byId.get(c), { status: 'FAILURE', failReason: 'Banned prompt detected' })
  t.notOk(Object.keys(success.fields).some((k) => ['quota', 'user_id', 'token_id', 'channel_id', 'request_id', 'refunded_at', 'submit_time'].includes(k)), 'never billing columns')

  upstream.update(a, { status: 'CANCEL' })
  t.match((await poll(upstream, [a])).reports, [{ status: 'FAILURE', failReason: 'cancelled upstream' }], 'a cancelled task is a failure')
  t.same((await poll(upstream, [a], 'wrong-key')).reports, [], 'a refused poll reports nothing')
  upstream.scriptPoll({ http: 500 })
  t.same((await poll(upstream, [a])).reports, [], 'nor does a failed one')
  t.same(midjourneyPoll.readPoll(200, Buffer.from('not json'), [a]), [])

  // Submit answers and customIds.
  const read = (status: number, body: unknown) => readMjSubmit(status, Buffer.from(JSON.stringify(body)))
  t.match(read(200, { code: 22, description: 'queued', result: '123' }), { accepted: true, upstreamId: '123', code: 22 })
  t.match(read(200, { code: 21, description: 'exists', result: 456 }), { accepted: true, upstreamId: '456' })
  t.match(read(200, { code: 4, description: 'bad' }), { accepted: false, failure: { action: 'client' } })
  t.match(read(401, {}), { accepted: false, failure: { action: 'disable' } })
  t.match(read(502, {}), { accepted: false, failure: { action: 'retry' } })
  t.match(read(200, { code: 1, description: 'ok' }), { accepted: false, failure: { action: 'retry' } }, 'accepted without an id is not an acceptance')
  t.same(['MJ::JOB::upsample::1::x', 'MJ::JOB::variation::2::x', 'MJ::JOB::reroll::0::x::SOLO', 'MJ::JOB::pan_left::1::x::SOLO', 'MJ::JOB::high_variation::1::x::SOLO',
    'MJ::JOB::low_variation::1::x::SOLO', 'MJ::Outpaint::50::1::x::SOLO', 'MJ::CustomZoom::x', 'MJ::Inpaint::1::x::SOLO', 'MJ::JOB::upsample_v6_2x_subtle::1::x::SOLO'].map(mjActionOfCustomId),
  ['UPSCALE', 'VARIATION', 'REROLL', 'PAN', 'HIGH_VARIATION', 'LOW_VARIATION', 'ZOOM', 'CUSTOM_ZOOM', 'INPAINT', 'UPSCALE'])
  t.same(mjSimpleChange('123 V4'), { taskId: '123', action: 'VARIATION', index: 4 })
  t.equal(mjSimpleChange('123 X9'), undefined)
})
