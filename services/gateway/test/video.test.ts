import { type Database, failAndRefundTask, type Kysely, updateUnfinishedTask } from '@modelgate/db'
import { type ChannelConfig, videoPoll } from '@modelgate/providers'
import { QuotaStore } from '@modelgate/quota'
import { fakeVideo, type FakeVideo, fakeVideoContent } from '@modelgate/testing'
import type { FastifyInstance } from 'fastify'
import OpenAI, { toFile } from 'openai'
import t, { type Test } from 'tap'
import { buildGateway, reload, seedChannel, seedToken, seedUser, setOptions, settle, usageEvents } from './fixtures.js'

type Answer = { status: number, body: Record<string, unknown> & { error?: { message: string, type: string, code: string | null } } }

async function call (base: string, key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, body: await res.json() as Answer['body'] }
}

const channelOf = (fake: FakeVideo, key = fake.key): ChannelConfig => ({ id: 1, type: 1, key, baseUrl: fake.url, other: '', organization: null, setting: {} })

/** Polls `ids` as the worker does (one GET each) and returns the reports. */
async function poll (channel: ChannelConfig, ids: string[]) {
  const reports = []
  for (const id of ids) {
    const [up] = videoPoll.pollRequests(channel, [id])
    const res = await fetch(up!.url, { method: up!.method, headers: up!.headers })
    reports.push(...videoPoll.readPoll(res.status, Buffer.from(await res.arrayBuffer()), [id]))
  }
  return reports
}

/** Writes what the upstream reports to the rows, as the worker's poller does (a failure refunded). */
async function applyPoll (app: FastifyInstance, fake: FakeVideo, ids: string[]): Promise<void> {
  for (const r of await poll(channelOf(fake), ids)) {
    const row = await app.db.selectFrom('tasks').select('id').where('task_id', '=', r.upstreamId).executeTakeFirstOrThrow()
    const fields = { ...r.fields, ...(r.progress === undefined ? {} : { progress: r.progress }) }
    if (r.status === 'FAILURE') await failAndRefundTask(app.db, 'tasks', row.id, r.failReason ?? '', fields)
    else await updateUnfinishedTask(app.db, 'tasks', row.id, { ...fields, status: r.status })
  }
}

async function setup (t: Test, opts: { channelKey?: string, type?: number } = {}) {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeVideo(t)
  // Per second of video: sora-2 $0.1 (4 s by default: 0.4 x 500000 = 200000 quota), sora-2-pro $0.25 (4 s: 500000).
  await setOptions(app.db, { ModelPrice: { 'sora-2': 0.1, 'sora-2-pro': 0.25 } })
  const channel = await seedChannel(app.db, { type: opts.type ?? 1, baseUrl: upstream.url, models: ['sora-2', 'sora-2-pro'], key: opts.channelKey ?? upstream.key })
  await reload(app)
  const user = await seedUser(app.db, { quota: 10_000_000 })
  const token = await seedToken(app.db, user.id, { remain: 5_000_000 })
  return { app, url, upstream, channel, user, token }
}

const pgUser = async (db: Kysely<Database>, id: number) => (await db.selectFrom('users').select(['quota', 'used_quota']).where('id', '=', id).executeTakeFirstOrThrow())

t.test('a video is created, charged its ModelPrice per second once, followed to completion and its content streamed to the owner', async (t) => {
  const { app, url, upstream, channel, user, token } = await setup(t)
  const res = await call(url, token.key, 'POST', '/v1/videos', { model: 'sora-2', prompt: 'a cat on a train', seconds: '8', size: '1280x720', extra: true })
  t.equal(res.status, 200)
  const id = res.body['id'] as string
  t.ok(upstream.videos.has(id), 'the answer carries the upstream id')
  t.match(res.body, { object: 'video', model: 'sora-2', status: 'queued', progress: 0, seconds: '8', size: '1280x720' })
  t.equal(upstream.requests[0]!.headers.authorization, `Bearer ${upstream.key}`)
  t.same(JSON.parse(upstream.requests[0]!.body.toString()), { model: 'sora-2', prompt: 'a cat on a train', seconds: '8', size: '1280x720', extra: true }, 'unknown fields pass through')
  const row = await app.db.selectFrom('tasks').selectAll().where('task_id', '=', id).executeTakeFirstOrThrow()
  // 8 seconds at $0.1 a second: 0.8 x 500000.
  t.match(row, { platform: 'video', action: 'generate', status: 'QUEUED', quota: 400000, model_name: 'sora-2', channel_id: channel.id, user_id: user.id })
  const events = (await usageEvents(app)).filter((e) => e.user_id === user.id)
  t.match(events, [{ quota: 400000, reserved: 400000, outcome: 'success', model_name: 'sora-2', request_id: row.request_id }])
  await settle(app, events)
  t.same(await pgUser(app.db, user.id), { quota: 10_000_000 - 400000, used_quota: 400000 })
  for (const seconds of ['0', '2.5', 'ten', '121']) {
    const bad = await call(url, token.key, 'POST', '/v1/videos', { model: 'sora-2', prompt: 'p', seconds })
    t.equal(bad.status, 400, `seconds ${seconds}: 400 before anything is reserved or sent`)
  }
  t.equal(upstream.requests.filter((r) => r.method === 'POST').length, 1, 'the refused creates never reached the upstream')

  const before = await call(url, token.key, 'GET', `/v1/videos/${id}/content`)
  t.equal(before.status, 404, 'no content before completion (the upstream\'s 404 passed on)')
  t.equal(before.body.error?.type, 'invalid_request_error')
  upstream.start(id, 35)
  await applyPoll(app, upstream, [id])
  t.match((await call(url, token.key, 'GET', `/v1/videos/${id}`)).body, { id, object: 'video', status: 'in_progress', progress: 35, completed_at: null, error: null })
  upstream.complete(id)
  await applyPoll(app, upstream, [id])
  const done = await call(url, token.key, 'GET', `/v1/videos/${id}`)
  t.match(done.body, { id, object: 'video', model: 'sora-2', status: 'completed', progress: 100, prompt: 'a cat on a train', seconds: '8', size: '1280x720', error: null })
  t.ok((done.body['completed_at'] as number) > 0 && (done.body['expires_at'] as number) > 0)

  const content = await fetch(`${url}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${token.key}` } })
  t.equal(content.status, 200)
  t.equal(content.headers.get('content-type'), 'video/mp4')
  t.ok(Buffer.from(await content.arrayBuffer()).equals(fakeVideoContent(id)), 'the bytes are the upstream\'s')
  const thumb = await fetch(`${url}/v1/videos/${id}/content?variant=thumbnail`, { headers: { authorization: `Bearer ${token.key}` } })
  t.equal(thumb.headers.get('content-type'), 'image/webp')
  t.ok(Buffer.from(await thumb.arrayBuffer()).equals(fakeVideoContent(id, 'thumbnail')))
  t.equal(upstream.requests.at(-1)!.query.get('variant'), 'thumbnail')
  t.equal(upstream.requests.at(-1)!.headers.authorization, `Bearer ${upstream.key}`)
  t.match(await call(url, token.key, 'GET', `/v1/videos/${id}/content?variant=poster`), { status: 400, body: { error: { code: 'invalid_value' } } })
  t.equal((await usageEvents(app)).filter((e) => e.user_id === user.id).length, 1, 'reads and downloads are not charged')
})

t.test('the official openai client creates (multipart, with a reference image), retrieves and downloads a video', async (t) => {
  const { app, url, upstream, user, token } = await setup(t)
  const client = new OpenAI({ apiKey: token.key, baseURL: `${url}/v1`, maxRetries: 0 })
  const image = Buffer.from('\x89PNG fake image bytes')
  const video = await client.videos.create({ model: 'sora-2-pro', prompt: 'waves', seconds: '4', input_reference: await toFile(image, 'ref.png', { type: 'image/png' }) })
  t.equal(video.object, 'video')
  t.equal(video.model, 'sora-2-pro')
  const input = upstream.inputs.get(video.id)
  t.match(input?.fields, { model: 'sora-2-pro', prompt: 'waves', seconds: '4' })
  t.ok(input?.inputReference?.data.equals(image), 'the reference file reached the upstream byte for byte')
  t.equal(input?.inputReference?.filename, 'ref.png')
  t.match((await usageEvents(app)).filter((e) => e.user_id === user.id), [{ model_name: 'sora-2-pro', quota: 500000 }], 'billed at the model named in the form')

  t.equal((await client.videos.retrieve(video.id)).status, 'queued')
  upstream.complete(video.id)
  await applyPoll(app, upstream, [video.id])
  const done = await client.videos.retrieve(video.id)
  t.equal(done.status, 'completed')
  const bytes = Buffer.from(await (await client.videos.downloadContent(video.id)).arrayBuffer())
  t.ok(bytes.equals(fakeVideoContent(video.id)))
  const missing = await client.videos.retrieve('video_guess').then(() => undefined, (err: unknown) => err)
  t.ok(missing instanceof OpenAI.NotFoundError, 'a missing id is the SDK\'s NotFoundError')
})

t.test('the official openai client lists, remixes and deletes videos: a remix is billed like its source, on its channel; a deleted video is gone for its owner', async (t) => {
  const { app, url, upstream, channel, user, token } = await setup(t)
  const client = new OpenAI({ apiKey: token.key, baseURL: `${url}/v1`, maxRetries: 0 })
  const first = await client.videos.create({ model: 'sora-2', prompt: 'first', seconds: '8' })
  const second = await client.videos.create({ model: 'sora-2-pro', prompt: 'second', seconds: '4' })
  const third = await client.videos.create({ model: 'sora-2', prompt: 'third' })

  const page = await client.videos.list({ limit: 2 })
  t.same(page.data.map((v) => v.id), [third.id, second.id], 'newest first, two to a page')
  t.equal(page.has_more, true)
  const all: string[] = []
  for await (const v of client.videos.list({ limit: 2 })) all.push(v.id)
  t.same(all, [third.id, second.id, first.id], 'the SDK pages through every video with the after cursor')
  t.same((await client.videos.list({ order: 'asc' })).data.map((v) => v.id), [first.id, second.id, third.id], 'order=asc')
  t.match((await call(url, token.key, 'GET', '/v1/videos?limit=0')), { status: 400, body: { error: { code: 'invalid_value' } } })
  t.match((await call(url, token.key, 'GET', '/v1/videos?order=up')), { status: 400, body: { error: { code: 'invalid_value' } } })

  // A second channel, preferred for new creates: a remix still goes where its source lives.
  const other = await fakeVideo(t, { key: 'other-key' })
  await seedChannel(app.db, { type: 1, baseUrl: other.url, models: ['sora-2', 'sora-2-pro'], key: other.key, priority: 10 })
  await reload(app)
  const early = await client.videos.remix(first.id, { prompt: 'more cats' }).then(() => undefined, (err: unknown) => err)
  t.ok(early instanceof OpenAI.BadRequestError, 'an unfinished source: the upstream\'s 400 passed on')
  upstream.complete(first.id)
  await applyPoll(app, upstream, [first.id])
  const remix = await client.videos.remix(first.id, { prompt: 'more cats' })
  t.match(remix, { object: 'video', model: 'sora-2', seconds: '8', prompt: 'more cats', remixed_from_video_id: first.id, status: 'queued' })
  t.ok(upstream.videos.has(remix.id), 'made by the channel that holds the source')
  t.equal(other.requests.length, 0)
  const remixRequest = upstream.requests.find((r) => r.path === `/v1/videos/${first.id}/remix`)
  t.same(JSON.parse(remixRequest!.body.toString()), { prompt: 'more cats' })
  t.equal(remixRequest!.headers.authorization, `Bearer ${upstream.key}`)
  const remixRow = await app.db.selectFrom('tasks').selectAll().where('task_id', '=', remix.id).executeTakeFirstOrThrow()
  // The source's 8 seconds of sora-2 at $0.1: 400000.
  t.match(remixRow, { action: 'remix', quota: 400000, model_name: 'sora-2', channel_id: channel.id, status: 'QUEUED' })
  t.match((await usageEvents(app)).find((e) => e.request_id === remixRow.request_id), { quota: 400000, model_name: 'sora-2', channel_id: channel.id })
  t.match(await client.videos.retrieve(remix.id), { remixed_from_video_id: first.id, prompt: 'more cats' })
  t.match(await call(url, token.key, 'POST', `/v1/videos/${first.id}/remix`, {}), { status: 400, body: { error: { code: 'missing_required_parameter' } } })

  const unfinished = await client.videos.delete(second.id).then(() => undefined, (err: unknown) => err)
  t.ok(unfinished instanceof OpenAI.BadRequestError, 'a video still being made cannot be deleted')
  t.equal(upstream.requests.filter((r) => r.method === 'DELETE').length, 0, 'refused before the upstream')
  t.same(await client.videos.delete(first.id), { id: first.id, object: 'video.deleted', deleted: true })
  const del = upstream.requests.find((r) => r.method === 'DELETE')
  t.match(del, { path: `/v1/videos/${first.id}`, headers: { authorization: `Bearer ${upstream.key}` } })
  t.notOk(upstream.videos.has(first.id), 'deleted upstream')
  const gone = await client.videos.retrieve(first.id).then(() => undefined, (err: unknown) => err)
  t.ok(gone instanceof OpenAI.NotFoundError, 'a deleted video reads as missing')
  t.equal((await call(url, token.key, 'GET', `/v1/videos/${first.id}/content`)).status, 404)
  t.equal((await call(url, token.key, 'POST', `/v1/videos/${first.id}/remix`, { prompt: 'again' })).status, 404, 'nor can it be remixed')
  t.notOk((await client.videos.list()).data.some((v) => v.id === first.id), 'nor listed')
  const again = await client.videos.delete(first.id).then(() => undefined, (err: unknown) => err)
  t.ok(again instanceof OpenAI.NotFoundError, 'deleting twice: the second is a 404')
  const row = await app.db.selectFrom('tasks').select(['deleted_at', 'quota']).where('task_id', '=', first.id).executeTakeFirstOrThrow()
  t.ok(row.deleted_at > 0 && row.quota === 400000, 'the row stays as the billing record')

  // An upstream that lost the video already (expired): the deletion stands.
  upstream.fail(third.id, 'blocked')
  await applyPoll(app, upstream, [third.id])
  upstream.videos.delete(third.id)
  t.same(await client.videos.delete(third.id), { id: third.id, object: 'video.deleted', deleted: true })

  // Another account's ids: missing for list, remix and delete, and the upstream is not asked.
  const bob = await seedToken(app.db, (await seedUser(app.db)).id)
  const calls = upstream.requests.length
  t.same((await call(url, bob.key, 'GET', '/v1/videos')).body, { object: 'list', data: [], first_id: null, last_id: null, has_more: false })
  t.match(await call(url, bob.key, 'POST', `/v1/videos/${remix.id}/remix`, { prompt: 'mine now' }), { status: 404, body: { error: { code: 'video_not_found' } } })
  upstream.complete(remix.id)
  await applyPoll(app, upstream, [remix.id])
  const bobDelete = await fetch(`${url}/v1/videos/${remix.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${bob.key}` } })
  t.equal(bobDelete.status, 404)
  t.equal(upstream.requests.filter((r) => r.method !== 'GET').length, upstream.requests.slice(0, calls).filter((r) => r.method !== 'GET').length, 'no remix or delete reached the upstream for bob')
  t.ok(upstream.videos.has(remix.id), 'alice\'s remix is untouched')
  t.equal((await usageEvents(app)).filter((e) => e.user_id === user.id && e.quota > 0).length, 4, 'three creates and one remix charged; the refused remix, lists, reads and deletes not')
})

t.test('the channel\'s model mapping names the model upstream, in JSON and in multipart creates; the bill is the client\'s model', async (t) => {
  const { app, url, user, token } = await setup(t)
  const mapped = await fakeVideo(t, { key: 'mapped-key' })
  await seedChannel(app.db, { type: 1, baseUrl: mapped.url, models: ['sora-2'], key: mapped.key, priority: 10, modelMapping: { 'sora-2': 'sora-2-2025-12-08' } })
  await reload(app)
  const json = await call(url, token.key, 'POST', '/v1/videos', { model: 'sora-2', prompt: 'json' })
  t.equal(json.status, 200)
  t.equal(mapped.inputs.get(json.body['id'] as string)?.fields['model'], 'sora-2-2025-12-08', 'JSON: the mapped name went upstream')
  const client = new OpenAI({ apiKey: token.key, baseURL: `${url}/v1`, maxRetries: 0 })
  const image = Buffer.from('\x89PNG reference')
  const form = await client.videos.create({ model: 'sora-2', prompt: 'form', input_reference: await toFile(image, 'ref.png', { type: 'image/png' }) })
  const input = mapped.inputs.get(form.id)
  t.match(input?.fields, { model: 'sora-2-2025-12-08', prompt: 'form' }, 'multipart: the model field replaced')
  t.ok(input?.inputReference?.data.equals(image), 'the file kept byte for byte')
  t.match(input?.inputReference, { filename: 'ref.png', contentType: 'image/png' })
  const events = (await usageEvents(app)).filter((e) => e.user_id === user.id)
  t.match(events, [{ model_name: 'sora-2', upstream_model: 'sora-2-2025-12-08', quota: 200000 }, { model_name: 'sora-2', upstream_model: 'sora-2-2025-12-08', quota: 200000 }])
  // Without a model in the form, the default is what gets mapped.
  const bare = await fetch(`${url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${token.key}` }, body: (() => { const f = new FormData(); f.set('prompt', 'no model'); return f })() })
  const bareId = ((await bare.json()) as { id: string }).id
  t.equal(mapped.inputs.get(bareId)?.fields['model'], 'sora-2-2025-12-08')
})

t.test('a failed video reads failed with the upstream\'s reason and is refunded once', async (t) => {
  const { app, url, upstream, user, token } = await setup(t)
  const res = await call(url, token.key, 'POST', '/v1/videos', { prompt: 'forbidden' })
  const id = res.body['id'] as string
  t.equal(res.body['model'], 'sora-2', 'OpenAI\'s default model')
  await settle(app, (await usageEvents(app)).filter((e) => e.user_id === user.id))
  upstream.fail(id, 'Your request was blocked by our moderation system.')
  await applyPoll(app, upstream, [id])
  await applyPoll(app, upstream, [id])
  t.match((await call(url, token.key, 'GET', `/v1/videos/${id}`)).body, { status: 'failed', error: { code: 'moderation_blocked', message: 'Your request was blocked by our moderation system.' } })
  t.same(await pgUser(app.db, user.id), { quota: 10_000_000, used_quota: 0 }, 'charged 200000, refunded 200000 once')
  t.equal((await app.db.selectFrom('settlements').select('request_id').where('request_id', 'like', 'refund:%').execute()).length, 1)
})

t.test('a refused create charges nothing; a 500 fails over to the next channel', async (t) => {
  const { app, url, upstream, channel: first, user, token } = await setup(t)
  upstream.createFailures.push({ status: 400, body: { error: { message: 'Invalid size 1x1', type: 'invalid_request_error', param: 'size', code: 'invalid_value' } } })
  const refused = await call(url, token.key, 'POST', '/v1/videos', { prompt: 'p', size: '1x1' })
  t.match(refused, { status: 400, body: { error: { message: 'Invalid size 1x1', code: 'invalid_value' } } })
  t.equal((await app.db.selectFrom('tasks').select('id').execute()).length, 0, 'no task')
  const events = (await usageEvents(app)).filter((e) => e.user_id === user.id)
  t.match(events, [{ quota: 0, outcome: 'failed' }])
  await settle(app, events)
  t.same(await pgUser(app.db, user.id), { quota: 10_000_000, used_quota: 0 })
  t.equal(await new QuotaStore(app.redis).balance('token', token.row.id, token.row.user_id), 5_000_000, 'the reservation is given back')

  const second = await fakeVideo(t, { key: 'custom-key' })
  // A custom channel (type 8) given with a full endpoint URL: the video API is found under its /v1.
  const other = await seedChannel(app.db, { type: 8, baseUrl: `${second.url}/v1/chat/completions`, models: ['sora-2'], key: second.key, priority: -1 })
  await setOptions(app.db, { RetryTimes: '1' })
  await reload(app)
  upstream.createFailures.push({ status: 500 })
  const res = await call(url, token.key, 'POST', '/v1/videos', { prompt: 'p' })
  t.equal(res.status, 200)
  t.ok(second.videos.has(res.body['id'] as string), 'the custom channel took it')
  t.equal(second.requests[0]!.path, '/v1/videos')
  const row = await app.db.selectFrom('tasks').selectAll().where('task_id', '=', res.body['id'] as string).executeTakeFirstOrThrow()
  t.equal(row.channel_id, other.id)
  const last = (await usageEvents(app)).find((e) => e.request_id === row.request_id)
  t.match(last, { quota: 200000, channel_id: other.id, retried_channels: [first.id] })
})

t.test('a wrong channel key fails the create without a charge', async (t) => {
  const { app, url, upstream, channel, user, token } = await setup(t, { channelKey: 'sk-wrong' })
  const res = await call(url, token.key, 'POST', '/v1/videos', { prompt: 'p' })
  t.not(res.status, 200)
  t.equal(typeof res.body.error?.message, 'string')
  t.equal(upstream.requests[0]!.headers.authorization, 'Bearer sk-wrong')
  t.equal(upstream.videos.size, 0)
  t.match((await usageEvents(app)).filter((e) => e.user_id === user.id), [{ quota: 0, outcome: 'failed' }])
  t.equal((await app.db.selectFrom('channels').select('status').where('id', '=', channel.id).executeTakeFirstOrThrow()).status, 3, 'the refused key disabled the channel')
})

t.test('a token without enough quota is refused before any upstream call', async (t) => {
  const { app, url, upstream, user } = await setup(t)
  const poor = await seedToken(app.db, user.id, { remain: 199_999 })
  const calls = upstream.requests.length
  const refused = await call(url, poor.key, 'POST', '/v1/videos', { prompt: 'p' })
  t.same(refused, { status: 403, body: { error: { message: 'Insufficient API key quota', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } } })
  t.equal(upstream.requests.length, calls, 'no upstream call')
})

t.test('a user never reads or downloads another user\'s video: its id answers like a missing one', async (t) => {
  const { app, url, upstream, token: alice } = await setup(t)
  const bobUser = await seedUser(app.db)
  const bob = await seedToken(app.db, bobUser.id)
  const id = (await call(url, alice.key, 'POST', '/v1/videos', { prompt: 'mine' })).body['id'] as string
  upstream.complete(id)
  await applyPoll(app, upstream, [id])
  t.equal((await call(url, alice.key, 'GET', `/v1/videos/${id}`)).status, 200)
  const guessed = await call(url, bob.key, 'GET', `/v1/videos/${id}`)
  t.equal(guessed.status, 404)
  t.same(guessed.body, { error: { message: `Video with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: 'video_not_found' } })
  const calls = upstream.requests.length
  const content = await call(url, bob.key, 'GET', `/v1/videos/${id}/content`)
  t.same(content, guessed, 'the content of another user\'s video is missing too')
  t.equal(upstream.requests.length, calls, 'and the upstream was not asked')
  const missing = await call(url, bob.key, 'GET', '/v1/videos/video_nothing/content')
  t.equal(missing.status, 404)
  t.equal(missing.body.error?.code, 'video_not_found')
  t.equal((await fetch(`${url}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${alice.key}` } })).status, 200, 'the owner downloads it')
})

t.test('videoPoll asks one GET per video and reads each status', async (t) => {
  const fake = await fakeVideo(t)
  const create = async (prompt: string) => {
    const res = await fetch(`${fake.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${fake.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt }) })
    return ((await res.json()) as { id: string }).id
  }
  const [a, b, c, d] = [await create('a'), await create('b'), await create('c'), await create('d')]
  fake.start(b, 42)
  fake.complete(c)
  fake.fail(d, 'blocked')
  const requests = videoPoll.pollRequests(channelOf(fake), [a, b])
  t.equal(requests.length, 2, 'one request per id')
  t.match(requests[0], { method: 'GET', url: `${fake.url}/v1/videos/${a}`, headers: { Authorization: `Bearer ${fake.key}` } })
  const by = new Map((await poll(channelOf(fake), [a, b, c, d])).map((r) => [r.upstreamId, r]))
  t.match(by.get(a), { status: 'QUEUED', progress: '0%' })
  t.match(by.get(b), { status: 'IN_PROGRESS', progress: '42%' })
  t.match(by.get(c), { status: 'SUCCESS', progress: '100%' })
  t.ok((by.get(c)!.fields['finish_time'] as number) > 0)
  t.match(JSON.parse(by.get(c)!.fields['data'] as string), { id: c, status: 'completed' })
  t.match(by.get(d), { status: 'FAILURE', failReason: 'blocked' })
  t.same(await poll(channelOf(fake), ['video_unknown']), [], 'a 404 reports nothing')
  t.same(await poll(channelOf(fake, 'wrong'), [a]), [], 'a refused key reports nothing')
  fake.retrieveFailures.push({ status: 500 })
  t.same(await poll(channelOf(fake), [a]), [], 'a 500 reports nothing')
  t.same(videoPoll.readPoll(200, Buffer.from(JSON.stringify({ id: b, status: 'completed' })), [a]), [], 'an answer about another id is ignored')
})
