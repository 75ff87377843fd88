import { activateSubscription, type Database, type Kysely, updateUnfinishedTask } from '@modelgate/db'
import { type ChannelConfig, sunoPoll, type UpstreamRequest } from '@modelgate/providers'
import { QuotaStore } from '@modelgate/quota'
import { fakeSuno, type FakeSuno } from '@modelgate/testing'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, seedUser, setOptions, settle, usageEvents } from './fixtures.js'

type SunoAnswer = { status: number, body: { code: string, message: string, data: unknown } }

async function call (base: string, key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<SunoAnswer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, body: await res.json() as SunoAnswer['body'] }
}

/** Sends one poll request of the protocol as the worker would, and reads its answer. */
async function poll (channel: ChannelConfig, ids: string[]) {
  const requests = sunoPoll.pollRequests(channel, ids)
  const reports = []
  for (const up of requests) reports.push(...await sendUp(up, async (status, body) => sunoPoll.readPoll(status, body, ids)))
  return { requests, reports }
}

async function sendUp<T> (up: UpstreamRequest, read: (status: number, body: Buffer) => Promise<T>): Promise<T> {
  const res = await fetch(up.url, { method: up.method, headers: up.headers, ...(up.body === undefined ? {} : { body: up.body }) })
  return await read(res.status, Buffer.from(await res.arrayBuffer()))
}

const channelOf = (fake: FakeSuno, key = fake.key): ChannelConfig => ({ id: 1, type: 36, key, baseUrl: fake.url, other: '', organization: null, setting: {} })

/** Applies what the upstream reports now to the task rows, as the worker's poller does for unfinished tasks. */
async function applyPoll (app: FastifyInstance, fake: FakeSuno, ids: string[]): Promise<void> {
  const { reports } = await poll(channelOf(fake), ids)
  for (const r of reports) {
    const row = await app.db.selectFrom('tasks').select('id').where('task_id', '=', r.upstreamId).executeTakeFirstOrThrow()
    await updateUnfinishedTask(app.db, 'tasks', row.id, { ...r.fields, status: r.status, ...(r.progress === undefined ? {} : { progress: r.progress }) })
  }
}

async function setup (t: Test, opts: { channelKey?: string, group?: string } = {}) {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeSuno(t)
  const channel = await seedChannel(app.db, { type: 36, baseUrl: upstream.url, models: ['suno_music', 'suno_lyrics'], key: opts.channelKey ?? upstream.key, groups: ['default', 'vip'] })
  await reload(app)
  const user = await seedUser(app.db, { quota: 10_000_000, group: opts.group ?? 'default' })
  const token = await seedToken(app.db, user.id, { remain: 5_000_000 })
  return { app, url, upstream, channel, user, token }
}

const pgUser = async (db: Kysely<Database>, id: number) => (await db.selectFrom('users').select(['quota', 'used_quota']).where('id', '=', id).executeTakeFirstOrThrow())
const pgToken = async (db: Kysely<Database>, id: number) => (await db.selectFrom('tokens').select('remain_quota').where('id', '=', id).executeTakeFirstOrThrow()).remain_quota

t.test('a music task is submitted, charged ModelPrice x QuotaPerUnit x group ratio once, and fetched to success with its clips', async (t) => {
  const { app, url, upstream, channel, user, token } = await setup(t, { group: 'vip' })
  // $0.2 x 500000 x 1.5 = 150000 quota a song.
  await setOptions(app.db, { ModelPrice: { suno_music: 0.2, suno_lyrics: 0.01 }, GroupRatio: { default: 1, vip: 1.5 } })
  await reload(app)
  const body = { prompt: 'a song about tests', mv: 'chirp-v3-5', title: 'Green', tags: 'pop', make_instrumental: false, custom_field: 7 }
  const res = await call(url, token.key, 'POST', '/suno/submit/music', body)
  t.equal(res.status, 200)
  t.equal(res.body.code, 'success')
  const id = res.body.data as string
  t.ok(upstream.tasks.has(id), 'the answer carries the upstream task id')
  t.equal(upstream.submits.length, 1)
  t.equal(upstream.submits[0]!.headers.authorization, `Bearer ${upstream.key}`, 'the channel key went upstream')
  t.same(JSON.parse(upstream.submits[0]!.body.toString()), body, 'the body went through untouched')

  const row = await app.db.selectFrom('tasks').selectAll().where('task_id', '=', id).executeTakeFirstOrThrow()
  t.match(row, { platform: 'suno', action: 'MUSIC', status: 'SUBMITTED', user_id: user.id, token_id: token.row.id, channel_id: channel.id, quota: 150000, model_name: 'suno_music', group: 'vip' })
  const events = (await usageEvents(app)).filter((e) => e.user_id === user.id)
  t.equal(events.length, 1, 'one usage event')
  t.match(events[0], { quota: 150000, reserved: 150000, outcome: 'success', model_name: 'suno_music', channel_id: channel.id, request_id: row.request_id })
  await settle(app, events)
  t.same(await pgUser(app.db, user.id), { quota: 10_000_000 - 150000, used_quota: 150000 }, 'the user paid the song once')
  t.equal(await pgToken(app.db, token.row.id), 5_000_000 - 150000, 'and so did the token')

  // Fetched from Postgres as the worker keeps it: in progress, then success with the clips.
  upstream.start(id, '40%')
  await applyPoll(app, upstream, [id])
  const running = await call(url, token.key, 'GET', `/suno/fetch/${id}`)
  t.match(running, { status: 200, body: { code: 'success', data: { task_id: id, action: 'MUSIC', status: 'IN_PROGRESS', progress: '40%' } } })
  upstream.succeed(id)
  await applyPoll(app, upstream, [id])
  const done = await call(url, token.key, 'GET', `/suno/fetch/${id}`)
  t.match(done.body.data, { task_id: id, status: 'SUCCESS', progress: '100%', fail_reason: '' })
  const clips = (done.body.data as { data: Array<{ audio_url: string, title: string }> }).data
  t.same(clips.map((c) => c.audio_url), [`https://cdn.suno.test/${id}-1.mp3`, `https://cdn.suno.test/${id}-2.mp3`])
  t.equal(clips[0]!.title, 'Green')
  t.ok((done.body.data as { finish_time: number }).finish_time > 0)
  t.equal(upstream.requests.filter((r) => r.path.startsWith('/suno/fetch')).length, 2, 'client fetches are answered from Postgres (only the poller asked upstream)')
  t.equal((await usageEvents(app)).filter((e) => e.user_id === user.id).length, 1, 'no second charge')
})

t.test('a lyrics task is billed at suno_lyrics and fetched in a batch with the music task', async (t) => {
  const { app, url, upstream, token, user } = await setup(t)
  const music = await call(url, token.key, 'POST', '/suno/submit/music', { gpt_description_prompt: 'jazz' })
  const lyrics = await call(url, token.key, 'POST', '/suno/submit/lyrics', { prompt: 'rain' })
  t.equal(lyrics.body.code, 'success')
  const [m, l] = [music.body.data as string, lyrics.body.data as string]
  t.equal(upstream.submits[1]!.path, '/suno/submit/lyrics')
  // Defaults: suno_music 0.1 and suno_lyrics 0.01 x 500000.
  const events = (await usageEvents(app)).filter((e) => e.user_id === user.id)
  t.same(events.map((e) => [e.model_name, e.quota]).sort(), [['suno_lyrics', 5000], ['suno_music', 50000]])
  upstream.succeed(l)
  await applyPoll(app, upstream, [m, l])
  const batch = await call(url, token.key, 'POST', '/suno/fetch', { ids: [m, l, 'no-such-task'], action: '' })
  t.equal(batch.body.code, 'success')
  const tasks = batch.body.data as Array<{ task_id: string, action: string, status: string, data: unknown }>
  t.same(tasks.map((x) => [x.task_id, x.action, x.status]), [[m, 'MUSIC', 'SUBMITTED'], [l, 'LYRICS', 'SUCCESS']], 'known tasks only, unknown ids left out')
  t.match(tasks[1]!.data, { text: /lyrics for rain/, status: 'complete' })
  const onlyLyrics = await call(url, token.key, 'POST', '/suno/fetch', { ids: [m, l], action: 'LYRICS' })
  t.same((onlyLyrics.body.data as Array<{ task_id: string }>).map((x) => x.task_id), [l], 'filtered by action')
  const empty = await call(url, token.key, 'POST', '/suno/fetch', { ids: [] })
  t.match(empty, { status: 400, body: { code: 'invalid_request' } }, 'a fetch without ids is refused in Suno\'s shape')
})

t.test('a refused submit charges nothing, records no task and releases the reservation', async (t) => {
  const { app, url, upstream, token, user } = await setup(t)
  const quota = new QuotaStore(app.redis)
  upstream.submitFailures.push({ status: 400, body: { code: 'error', message: 'prompt is required', data: null } })
  const res = await call(url, token.key, 'POST', '/suno/submit/music', { mv: 'chirp-v3-5' })
  t.same(res, { status: 400, body: { code: 'error', message: 'prompt is required', data: null } }, 'the refusal in Suno\'s shape')
  t.equal(upstream.requests.length, 1, 'not retried elsewhere: the client erred')
  t.equal((await app.db.selectFrom('tasks').select('id').execute()).length, 0, 'no task row')
  const events = (await usageEvents(app)).filter((e) => e.user_id === user.id)
  t.equal(events.length, 1)
  t.match(events[0], { quota: 0, reserved: 50000, outcome: 'failed' })
  await settle(app, events)
  t.equal(await quota.balance('token', token.row.id, token.row.user_id), 5_000_000, 'the reservation is given back in Redis at settlement')
  t.equal(await pgToken(app.db, token.row.id), 5_000_000, 'nothing charged in Postgres')
  t.same(await pgUser(app.db, user.id), { quota: 10_000_000, used_quota: 0 })

  // A 200 whose code is not success is a refusal too.
  upstream.submitFailures.push({ status: 200, body: { code: 'fail', message: 'content policy', data: null } })
  const refused = await call(url, token.key, 'POST', '/suno/submit/lyrics', { prompt: 'x' })
  t.same(refused, { status: 400, body: { code: 'error', message: 'content policy', data: null } })
  t.equal((await app.db.selectFrom('tasks').select('id').execute()).length, 0)
})

t.test('a submit refused with 500 fails over to the next channel; the charge names the channel that took it', async (t) => {
  const { app, url, upstream: broken, channel: first, token, user } = await setup(t)
  const healthy = await fakeSuno(t, { key: 'second-key' })
  await app.db.updateTable('channels').set({ priority: 10 }).where('id', '=', first.id).execute()
  await app.db.updateTable('abilities').set({ priority: 10 }).where('channel_id', '=', first.id).execute()
  const second = await seedChannel(app.db, { type: 36, baseUrl: healthy.url, models: ['suno_music'], key: healthy.key, priority: 0 })
  await setOptions(app.db, { RetryTimes: '2' })
  await reload(app)
  broken.submitFailures.push({ status: 500 })
  const res = await call(url, token.key, 'POST', '/suno/submit/music', { prompt: 'p' })
  t.equal(res.body.code, 'success')
  t.equal(broken.requests.length, 1, 'the first channel was tried')
  t.ok(healthy.tasks.has(res.body.data as string), 'the second took it')
  const row = await app.db.selectFrom('tasks').selectAll().where('task_id', '=', res.body.data as string).executeTakeFirstOrThrow()
  t.equal(row.channel_id, second.id)
  const events = (await usageEvents(app)).filter((e) => e.user_id === user.id)
  t.equal(events.length, 1)
  t.match(events[0], { quota: 50000, channel_id: second.id, retried_channels: [first.id] })
})

t.test('a channel with a wrong key fails the submit without a charge', async (t) => {
  const { app, url, upstream, token, user } = await setup(t, { channelKey: 'not-the-key' })
  const res = await call(url, token.key, 'POST', '/suno/submit/music', { prompt: 'p' })
  t.not(res.status, 200)
  t.not(res.body.code, 'success')
  t.equal(typeof res.body.message, 'string')
  t.equal(upstream.requests[0]?.headers.authorization, 'Bearer not-the-key', 'the upstream refused the key it got')
  t.equal(upstream.tasks.size, 0)
  t.equal((await app.db.selectFrom('tasks').select('id').execute()).length, 0)
  const events = (await usageEvents(app)).filter((e) => e.user_id === user.id)
  t.match(events, [{ quota: 0, outcome: 'failed' }])
})

t.test('a token without enough quota is refused before any upstream call, in Suno\'s shape', async (t) => {
  const { app, url, upstream, user } = await setup(t)
  const poor = await seedToken(app.db, user.id, { remain: 49_999 })
  const res = await call(url, poor.key, 'POST', '/suno/submit/music', { prompt: 'p' })
  t.same(res, { status: 403, body: { code: 'insufficient_quota', message: 'Insufficient API key quota', data: null } })
  t.equal(upstream.requests.length, 0, 'no upstream call')
  const bad = await call(url, 'sk-nosuchkey000000000000000000', 'POST', '/suno/submit/music', { prompt: 'p' })
  t.match(bad, { status: 401, body: { code: 'invalid_api_key', message: 'Invalid API key', data: null } })
})

t.test('a user never fetches another user\'s task: its id answers like a missing one', async (t) => {
  const { app, url, token: alice } = await setup(t)
  const bobUser = await seedUser(app.db)
  const bob = await seedToken(app.db, bobUser.id)
  const submitted = await call(url, alice.key, 'POST', '/suno/submit/music', { prompt: 'mine' })
  const id = submitted.body.data as string
  t.equal((await call(url, alice.key, 'GET', `/suno/fetch/${id}`)).status, 200, 'the owner fetches it')
  const guessed = await call(url, bob.key, 'GET', `/suno/fetch/${id}`)
  const missing = await call(url, bob.key, 'GET', '/suno/fetch/does-not-exist')
  t.same(guessed, missing, 'another user\'s id reads exactly as a missing one')
  t.equal(guessed.status, 404)
  const batch = await call(url, bob.key, 'POST', '/suno/fetch', { ids: [id] })
  t.same(batch, { status: 200, body: { code: 'success', message: '', data: [] } })
  const own = await call(url, alice.key, 'POST', '/suno/fetch', { ids: [id] })
  t.equal((own.body.data as unknown[]).length, 1)
})

t.test('sunoPoll asks a channel about its tasks in one fetch and reads each status', async (t) => {
  const fake = await fakeSuno(t)
  const submit = async (kind: string, body: unknown) => {
    const res = await fetch(`${fake.url}/suno/submit/${kind}`, { method: 'POST', headers: { authorization: `Bearer ${fake.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return ((await res.json()) as { data: string }).data
  }
  const [a, b, c, d] = [await submit('music', { prompt: 'a' }), await submit('music', { prompt: 'b' }), await submit('lyrics', { prompt: 'c' }), await submit('music', { prompt: 'd' })]
  fake.queue(a)
  fake.start(b, '70%')
  fake.succeed(c)
  fake.fail(d, 'the prompt was refused')
  const { requests, reports } = await poll(channelOf(fake), [a, b, c, d, 'unknown'])
  t.equal(requests.length, 1, 'one batch request')
  t.match(requests[0], { method: 'POST', url: `${fake.url}/suno/fetch`, headers: { Authorization: `Bearer ${fake.key}` } })
  t.same(JSON.parse(fake.requests.at(-1)!.body.toString()), { ids: [a, b, c, d, 'unknown'], action: '' })
  const by = new Map(reports.map((r) => [r.upstreamId, r]))
  t.equal(reports.length, 4, 'the unknown id is not reported')
  t.match(by.get(a), { status: 'QUEUED', progress: '0%' })
  t.match(by.get(b), { status: 'IN_PROGRESS', progress: '70%' })
  t.ok((by.get(b)!.fields['start_time'] as number) > 0)
  t.match(by.get(c), { status: 'SUCCESS', progress: '100%' })
  t.match(JSON.parse(by.get(c)!.fields['data'] as string), { text: /lyrics for c/ })
  t.match(by.get(d), { status: 'FAILURE', failReason: 'the prompt was refused' })
  t.same(sunoPoll.readPoll(200, Buffer.from(JSON.stringify({ code: 'success', data: [{ task_id: a, status: 'weird' }] })), [a])[0]?.status, 'UNKNOWN', 'an unknown status word reads UNKNOWN')
  t.same(sunoPoll.readPoll(200, Buffer.from(JSON.stringify({ code: 'success', data: [{ task_id: 'x', status: 'SUCCESS' }] })), [a]), [], 'a task not asked about is ignored')

  fake.fetchFailures.push({ status: 500 })
  t.same((await poll(channelOf(fake), [a])).reports, [], 'a failed fetch reports nothing')
  t.same((await poll(channelOf(fake, 'wrong'), [a])).reports, [], 'a refused key reports nothing')
  t.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer wrong')
  t.same(sunoPoll.pollRequests(channelOf(fake), []), [], 'nothing to ask, no request')
})

t.test('a task paid by a subscription\'s item names the item on its row (a failure refunds it there), and settles against it', async (t) => {
  const { app, url, user, token } = await setup(t)
  await setOptions(app.db, { ModelPrice: { suno_music: 0.2 } })
  await reload(app)
  const plan = await app.db.insertInto('subscription_plans').values({ title: 'Songs', price_minor: 500, duration_unit: 'month' }).returningAll().executeTakeFirstOrThrow()
  await app.db.insertInto('subscription_plan_items').values({ plan_id: plan.id, model_name: 'suno_music', quota_type: 1, amount_total: 3 }).execute()
  const sub = await app.db.transaction().execute(async (trx) => await activateSubscription(trx, { userId: user.id, planId: plan.id, source: 'admin' }))
  const res = await call(url, token.key, 'POST', '/suno/submit/music', { prompt: 'paid by the plan' })
  t.equal(res.status, 200)
  const row = await app.db.selectFrom('tasks').select(['subscription_item_id', 'quota']).where('task_id', '=', res.body.data as string).executeTakeFirstOrThrow()
  t.same(row, { subscription_item_id: sub.items[0]!.id, quota: 100_000 })
  const events = await usageEvents(app)
  t.equal(events[0]!.paid_by?.item_id, sub.items[0]!.id)
  await settle(app, events)
  t.equal((await app.db.selectFrom('user_subscription_items').select('amount_used').where('id', '=', sub.items[0]!.id).executeTakeFirstOrThrow()).amount_used, 1, 'one request of the three')
  t.equal((await pgUser(app.db, user.id)).quota, 10_000_000, 'the wallet did not pay')
})
