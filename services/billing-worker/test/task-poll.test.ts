import { randomUUID } from 'node:crypto'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { type UsageEvent } from '@modelgate/contracts'
import { activateSubscription, createDb, failAndRefundTask, LOG_TYPE, settleUsageBatch } from '@modelgate/db'
import { sunoPoll, TASK_POLL_PROTOCOLS } from '@modelgate/providers'
import { QuotaStore } from '@modelgate/quota'
import { SecretBox } from '@modelgate/service'
import { createServiceEnv, fakeMidjourney, fakeSuno, freePort, TEST_SECRETS } from '@modelgate/testing'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { run, type TaskPollDeps } from '../src/jobs/task-poll/handler.js'

const require = createRequire(import.meta.url)
const PRICE = 50_000
const START = 10_000_000

/**
 * A user with a token, a Suno channel on a fake Suno server, and helpers that make a task the way
 * the gateway does: submitted upstream, its row written, its charge settled (as the billing worker
 * settles the gateway's usage event).
 */
async function setup (t: Test, env: Record<string, string> = {}) {
  const serviceEnv = await createServiceEnv(t, env)
  const db = createDb(serviceEnv.DATABASE_URL!)
  t.teardown(() => db.destroy())
  const redis = new Redis(serviceEnv.REDIS_URL!, { keyPrefix: serviceEnv.REDIS_KEY_PREFIX })
  t.teardown(() => { redis.disconnect() })
  const quota = new QuotaStore(redis)
  const suno = await fakeSuno(t)
  const box = new SecretBox(TEST_SECRETS.CRYPTO_SECRET)
  const user = await db.insertInto('users').values({ username: 'composer', quota: START, access_token_hash: null, aff_code: null, deleted_at: null, setting: {} }).returningAll().executeTakeFirstOrThrow()
  const token = await db.insertInto('tokens').values({ user_id: user.id, name: 'songs', key_hash: randomUUID(), key_encrypted: 'x', remain_quota: START, deleted_at: null }).returningAll().executeTakeFirstOrThrow()
  const channel = await db.insertInto('channels').values({ type: 36, name: 'suno', key: box.seal(suno.key), base_url: suno.url, models: 'suno_music', openai_organization: null, tag: null, other_info: {} }).returningAll().executeTakeFirstOrThrow()
  await quota.setBalance('user', user.id, START)
  await quota.setBalance('token', token.id, START, token.user_id)
  const deps: TaskPollDeps = { db, quota, box, protocols: TASK_POLL_PROTOCOLS, timeoutMs: 3_600_000, leaseMs: 10_000, log: { warn: () => {} } }

  /** A charged Suno task: submitted to the fake, its row written, its charge settled. */
  const task = async (opts: { submitSecondsAgo?: number } = {}) => {
    const res = await fetch(`${suno.url}/suno/submit/music`, { method: 'POST', headers: { authorization: `Bearer ${suno.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'a song' }) })
    const id = (await res.json() as { data: string }).data
    const requestId = randomUUID()
    const submitTime = Math.floor(Date.now() / 1000) - (opts.submitSecondsAgo ?? 0)
    const row = await db.insertInto('tasks').values({
      task_id: id, platform: 'suno', user_id: user.id, username: user.username, token_id: token.id, token_name: token.name, unlimited_token: false,
      channel_id: channel.id, model_name: 'suno_music', group: 'default', request_id: requestId, quota: PRICE, action: 'MUSIC',
      status: 'SUBMITTED', progress: '0%', submit_time: submitTime
    }).returningAll().executeTakeFirstOrThrow()
    const charge: UsageEvent = {
      request_id: requestId, created_at: submitTime, user_id: user.id, username: user.username, token_id: token.id, token_name: token.name, unlimited_token: false,
      channel_id: channel.id, model_name: 'suno_music', upstream_model: 'suno_music', group: 'default', is_stream: false, ip: '127.0.0.1', use_time_ms: 100,
      first_response_ms: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reserved: PRICE, quota: PRICE, outcome: 'success', usage_source: 'none',
      price: { model_price: 0.1, group_ratio: 1 }, retried_channels: []
    }
    await settleUsageBatch(db, [charge], { writeLog: true })
    await quota.adjust('user', user.id, -PRICE)
    await quota.adjust('token', token.id, -PRICE, user.id)
    return { id, row }
  }
  const balances = async () => ({
    user: (await db.selectFrom('users').select('quota').where('id', '=', user.id).executeTakeFirstOrThrow()).quota,
    token: (await db.selectFrom('tokens').select('remain_quota').where('id', '=', token.id).executeTakeFirstOrThrow()).remain_quota,
    redisUser: await quota.balance('user', user.id),
    redisToken: await quota.balance('token', token.id, token.user_id)
  })
  const refunds = async () => await db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.system).where('user_id', '=', user.id).execute()
  const row = async (id: number) => await db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  return { env: serviceEnv, db, quota, suno, box, user, token, channel, deps, task, balances, refunds, row }
}

t.test('progress and success are written from the upstream; nothing is refunded', async (t) => {
  const s = await setup(t)
  const { id, row } = await s.task()
  s.suno.start(id, '40%')
  t.match(await run(s.deps), { polled: 1, updated: 1, refunded: 0 })
  t.match(await s.row(row.id), { status: 'IN_PROGRESS', progress: '40%', refunded_at: 0, lease_until: 0 })
  const asked = s.suno.requests.filter((r) => r.path.startsWith('/suno/fetch'))
  t.equal(asked.length, 1, 'one batch request for the channel')
  t.equal(asked[0]!.headers['authorization'], `Bearer ${s.suno.key}`, 'with the channel key')

  s.suno.succeed(id)
  t.match(await run(s.deps), { updated: 1, succeeded: 1, refunded: 0 })
  const done = await s.row(row.id)
  t.match(done, { status: 'SUCCESS', progress: '100%', refunded_at: 0 })
  t.ok(Array.isArray(done.data) && (done.data as unknown[]).length > 0, 'the clips are stored')
  t.ok(done.finish_time > 0)
  t.same(await s.balances(), { user: START - PRICE, token: START - PRICE, redisUser: START - PRICE, redisToken: START - PRICE }, 'charged once, not refunded')

  const before = s.suno.requests.length
  t.match(await run(s.deps), { polled: 0 }, 'a finished task is not asked about again')
  t.equal(s.suno.requests.length, before)
  s.suno.fail(id, 'late failure')
  await run(s.deps)
  t.match(await s.row(row.id), { status: 'SUCCESS' }, 'and never reopened')
})

t.test('a failure is refunded exactly once, also when two pollers see it at once; a wrong channel key refunds nothing', async (t) => {
  const s = await setup(t)
  const { id, row } = await s.task()
  t.same(await s.balances(), { user: START - PRICE, token: START - PRICE, redisUser: START - PRICE, redisToken: START - PRICE })

  // A channel key the upstream refuses: the poll fails, the task stays as it was.
  await s.db.updateTable('channels').set({ key: s.box.seal('wrong-key') }).where('id', '=', s.channel.id).execute()
  s.suno.fail(id, 'content policy')
  t.match(await run(s.deps), { refunded: 0, updated: 0 })
  t.match(await s.row(row.id), { status: 'SUBMITTED', refunded_at: 0 }, 'an unreadable answer changes nothing')
  await s.db.updateTable('channels').set({ key: s.box.seal(s.suno.key) }).where('id', '=', s.channel.id).execute()

  // Two pollers at once (two worker replicas): one claims the task, one refund.
  const [a, b] = await Promise.all([run(s.deps), run(s.deps)])
  t.equal(a.refunded + b.refunded, 1, 'one refund between the two pollers')
  const failed = await s.row(row.id)
  t.match(failed, { status: 'FAILURE', fail_reason: 'content policy' })
  t.ok(failed.refunded_at > 0)
  t.same(await s.balances(), { user: START, token: START, redisUser: START, redisToken: START }, 'the charge is back, in Postgres and in Redis')
  const logs = await s.refunds()
  t.equal(logs.length, 1, 'one refund log')
  t.match(logs[0], { quota: PRICE, model_name: 'suno_music', content: /content policy/ })
  t.equal((await s.db.selectFrom('settlements').selectAll().where('request_id', '=', `refund:tasks:${row.id}`).execute()).length, 1, 'the refund has its settlement record')

  // The refund itself, called twice at once (a replayed failure racing the poller): still once.
  const other = await s.task()
  const twice = await Promise.all([failAndRefundTask(s.db, 'tasks', other.row.id, 'x'), failAndRefundTask(s.db, 'tasks', other.row.id, 'x')])
  t.equal(twice.filter((r) => r !== undefined).length, 1, 'one of two concurrent refunds goes through')
  t.equal(await failAndRefundTask(s.db, 'tasks', other.row.id, 'again'), undefined, 'and later ones find it refunded')
  t.equal((await s.balances()).user, START, 'balance exact after both tasks')
  t.equal((await s.refunds()).length, 2)
})

t.test('a task past TASK_TIMEOUT_MINUTES is failed and refunded; a task whose channel was deleted too', async (t) => {
  const s = await setup(t)
  const stale = await s.task({ submitSecondsAgo: 2 * 3600 })
  const fresh = await s.task()
  const result = await run({ ...s.deps, timeoutMs: 3_600_000 })
  t.match(result, { timedOut: 1, polled: 1 })
  t.match(await s.row(stale.row.id), { status: 'FAILURE', fail_reason: /timed out/ })
  t.match(await s.row(fresh.row.id), { status: 'SUBMITTED', refunded_at: 0 })
  t.equal((await s.balances()).user, START - PRICE, 'the stale task\'s charge is back')

  await s.db.deleteFrom('channels').where('id', '=', s.channel.id).execute()
  t.match(await run(s.deps), { refunded: 1 })
  t.match(await s.row(fresh.row.id), { status: 'FAILURE', fail_reason: /channel of the task was deleted/ })
  t.same(await s.balances(), { user: START, token: START, redisUser: START, redisToken: START })
})

t.test('a worker killed while it polls a failed task: the next worker refunds it, exactly once', async (t) => {
  const s = await setup(t, { TASK_POLL_INTERVAL_MS: '1000', LOG_LEVEL: 'warn' })
  t.ok(TASK_POLL_PROTOCOLS.includes(sunoPoll), 'the worker polls Suno tasks')
  const { id, row } = await s.task()
  s.suno.fail(id, 'generation error')
  // The first worker's poll hangs (an upstream that takes the connection and never answers): it
  // is killed with the task claimed and its refund not made.
  const held: Socket[] = []
  const hang = createServer((socket) => { held.push(socket) })
  await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { for (const c of held) c.destroy(); hang.close() })
  await s.db.updateTable('channels').set({ base_url: `http://127.0.0.1:${(hang.address() as AddressInfo).port}` }).where('id', '=', s.channel.id).execute()
  const start = async () => {
    const child = spawn(process.execPath, [require.resolve('@modelgate/billing-worker/server')], {
      env: { ...s.env, BILLING_WORKER_PORT: String(await freePort()), HOST: '127.0.0.1' },
      stdio: 'ignore'
    })
    t.teardown(() => { child.kill('SIGKILL') })
    return child
  }
  const until = async (check: () => Promise<boolean> | boolean, ms: number) => {
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      if (await check()) return true
      await new Promise((r) => setTimeout(r, 100))
    }
    return false
  }
  const first = await start()
  t.ok(await until(() => held.length > 0, 30_000), 'the first worker asked about the task')
  first.kill('SIGKILL')
  await new Promise((r) => first.once('exit', r))
  t.match(await s.row(row.id), { status: 'SUBMITTED', refunded_at: 0 }, 'killed before the refund')
  t.ok((await s.row(row.id)).lease_until > Date.now(), 'with the task still claimed')
  await s.db.updateTable('channels').set({ base_url: s.suno.url }).where('id', '=', s.channel.id).execute()

  await start()
  t.ok(await until(async () => (await s.row(row.id)).status === 'FAILURE', 40_000), 'the next worker takes the task once the claim runs out, and fails it')
  await new Promise((r) => setTimeout(r, 2500))
  t.same(await s.balances(), { user: START, token: START, redisUser: START, redisToken: START }, 'refunded once, in Postgres and in Redis')
  t.equal((await s.refunds()).length, 1, 'one refund log')
})

t.test('drawing tasks: progress, then a failure refunded once; another drawing task succeeds with its image', async (t) => {
  const s = await setup(t)
  const mj = await fakeMidjourney(t)
  const channel = await s.db.insertInto('channels').values({ type: 2, name: 'mj', key: s.box.seal(mj.key), base_url: mj.url, models: 'mj_imagine', openai_organization: null, tag: null, other_info: {} }).returningAll().executeTakeFirstOrThrow()
  const draw = async () => {
    const res = await fetch(`${mj.url}/mj/submit/imagine`, { method: 'POST', headers: { 'mj-api-secret': mj.key, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'a cat' }) })
    const id = (await res.json() as { result: string }).result
    const requestId = randomUUID()
    const row = await s.db.insertInto('midjourneys').values({
      mj_id: id, user_id: s.user.id, username: s.user.username, token_id: s.token.id, token_name: s.token.name, channel_id: channel.id, model_name: 'mj_imagine',
      group: 'default', request_id: requestId, quota: PRICE, action: 'IMAGINE', status: 'SUBMITTED', progress: '0%', prompt: 'a cat', submit_time: Math.floor(Date.now() / 1000), code: 1
    }).returningAll().executeTakeFirstOrThrow()
    await settleUsageBatch(s.db, [{
      request_id: requestId, created_at: row.submit_time, user_id: s.user.id, username: s.user.username, token_id: s.token.id, token_name: s.token.name, unlimited_token: false,
      channel_id: channel.id, model_name: 'mj_imagine', upstream_model: 'mj_imagine', group: 'default', is_stream: false, ip: '127.0.0.1', use_time_ms: 10, first_response_ms: 0,
      prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, quota: PRICE, outcome: 'success', usage_source: 'none', price: {}, retried_channels: []
    }], { writeLog: true })
    await s.quota.adjust('user', s.user.id, -PRICE)
    await s.quota.adjust('token', s.token.id, -PRICE, s.user.id)
    return { id, row }
  }
  const mjRow = async (id: number) => await s.db.selectFrom('midjourneys').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  const bad = await draw()
  const good = await draw()
  mj.progress(bad.id, '30%')
  mj.progress(good.id, '60%')
  t.match(await run(s.deps), { polled: 2, updated: 2 })
  t.match(await mjRow(bad.row.id), { status: 'IN_PROGRESS', progress: '30%' })
  const polls = mj.requests.filter((r) => r.route === '/task/list-by-condition')
  t.equal(polls.length, 1, 'both asked about in one list-by-condition')
  t.ok(polls.every((r) => r.authorized), 'with the channel key')

  mj.fail(bad.id, 'banned prompt')
  mj.succeed(good.id)
  const [x, y] = await Promise.all([run(s.deps), run(s.deps)])
  t.equal(x.refunded + y.refunded, 1, 'one refund between two pollers')
  t.match(await mjRow(bad.row.id), { status: 'FAILURE', fail_reason: 'banned prompt' })
  const drawn = await mjRow(good.row.id)
  t.match(drawn, { status: 'SUCCESS', progress: '100%', refunded_at: 0 })
  t.match(drawn.image_url, /\/images\/.+\.png$/, 'the image URL is stored')
  t.same(await s.balances(), { user: START - PRICE, token: START - PRICE, redisUser: START - PRICE, redisToken: START - PRICE }, 'the failed drawing refunded, the good one charged')
  t.equal((await s.refunds()).length, 1)
})

t.test('a task paid by a subscription\'s item is refunded to that item, not to the wallet', async (t) => {
  const s = await setup(t)
  const plan = await s.db.insertInto('subscription_plans').values({ title: 'Songs', price_minor: 500, duration_unit: 'month' }).returningAll().executeTakeFirstOrThrow()
  await s.db.insertInto('subscription_plan_items').values([
    { plan_id: plan.id, model_name: 'suno_music', quota_type: 0, amount_total: 10 * PRICE },
    { plan_id: plan.id, model_name: 'suno_music', quota_type: 1, amount_total: 5 }
  ]).execute()
  const sub = await s.db.transaction().execute(async (trx) => await activateSubscription(trx, { userId: s.user.id, planId: plan.id, source: 'admin' }))
  const [byQuota, byRequest] = sub.items
  // As the gateway writes it: the row names the item, the item was charged at settlement.
  const paid = async (item: typeof byQuota, charged: number) => {
    const { row } = await s.task()
    await s.db.updateTable('tasks').set({ subscription_item_id: item!.id }).where('id', '=', row.id).execute()
    // Undo the wallet charge s.task() settled, and charge the item instead.
    await s.db.updateTable('users').set((eb) => ({ quota: eb('quota', '+', PRICE) })).where('id', '=', s.user.id).execute()
    await s.quota.adjust('user', s.user.id, PRICE)
    await s.db.updateTable('user_subscription_items').set((eb) => ({ amount_used: eb('amount_used', '+', charged) })).where('id', '=', item!.id).execute()
    await s.quota.setBalance('entitlement', item!.id, item!.amount_total - charged, s.user.id)
    return row
  }
  const a = await paid(byQuota, PRICE)
  const b = await paid(byRequest, 1)
  s.suno.fail(a.task_id, 'quota item task failed')
  s.suno.fail(b.task_id, 'request item task failed')
  t.match(await run(s.deps), { refunded: 2 })
  const used = async (id: number) => (await s.db.selectFrom('user_subscription_items').select('amount_used').where('id', '=', id).executeTakeFirstOrThrow()).amount_used
  t.equal(await used(byQuota!.id), 0, 'the quota item gets the price back')
  t.equal(await used(byRequest!.id), 0, 'the request item gets its request back')
  t.equal(await s.quota.balance('entitlement', byQuota!.id, s.user.id), 10 * PRICE)
  t.equal(await s.quota.balance('entitlement', byRequest!.id, s.user.id), 5)
  const b2 = await s.balances()
  t.same([b2.user, b2.redisUser], [START, START], 'the wallet neither paid nor got a refund')
  t.same([b2.token, b2.redisToken], [START, START], 'the key cap gets its charge back')
  t.match(await run(s.deps), { refunded: 0 }, 'once')
})
