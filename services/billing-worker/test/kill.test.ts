import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { USAGE_QUEUE, type UsageEvent } from '@modelgate/contracts'
import { createDb, sql } from '@modelgate/db'
import { bullConnection } from '@modelgate/service'
import { createServiceEnv, freePort } from '@modelgate/testing'
import { Queue } from 'bullmq'
import t from 'tap'

const require = createRequire(import.meta.url)

t.test('a worker killed mid-batch and restarted settles every event exactly once', async (t) => {
  const env = await createServiceEnv(t, { WORKER_LOCK_MS: '1500', LOG_LEVEL: 'warn' })
  const db = createDb(env.DATABASE_URL!)
  t.teardown(() => db.destroy())
  const user = await db.insertInto('users').values({ username: 'killme', quota: 100_000_000, access_token_hash: null, aff_code: null, deleted_at: null, setting: {} }).returningAll().executeTakeFirstOrThrow()
  const queue = new Queue(USAGE_QUEUE, { connection: bullConnection(env.REDIS_URL!), prefix: `${env.REDIS_KEY_PREFIX}bull` })
  t.teardown(() => queue.close())
  const events: UsageEvent[] = Array.from({ length: 4000 }, (_, i) => ({
    request_id: randomUUID(), created_at: Math.floor(Date.now() / 1000), user_id: user.id, username: 'killme', token_id: 0, token_name: 'pg', unlimited_token: true,
    channel_id: 0, model_name: 'm', upstream_model: 'm', group: 'default', is_stream: false, ip: '127.0.0.1', use_time_ms: 10, first_response_ms: 5,
    prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0, reserved: 10, quota: 1 + (i % 97), outcome: 'success', usage_source: 'upstream', price: {}, retried_channels: []
  }))
  const expected = events.reduce((a, e) => a + e.quota, 0)
  await queue.addBulk(events.map((e) => ({ name: 'settle', data: e, opts: { jobId: e.request_id, attempts: Number.MAX_SAFE_INTEGER, backoff: { type: 'capped' } } })))

  const start = async () => {
    const child = spawn(process.execPath, [require.resolve('@modelgate/billing-worker/server')], {
      env: { ...env, BILLING_WORKER_PORT: String(await freePort()), HOST: '127.0.0.1' },
      stdio: 'ignore'
    })
    t.teardown(() => { child.kill('SIGKILL') })
    return child
  }
  const settledCount = async () => (await db.selectFrom('settlements').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n
  const first = await start()
  const deadline = Date.now() + 60_000
  while (await settledCount() < 300 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  first.kill('SIGKILL')
  await new Promise((r) => first.once('exit', r))
  const atKill = await settledCount()
  t.ok(atKill > 0 && atKill < events.length, `killed with ${atKill} of ${events.length} settled`)

  await start()
  while (await settledCount() < events.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  t.equal(await settledCount(), events.length, 'every event settled after the restart')
  const row = await db.selectFrom('users').select(['quota', 'used_quota', 'request_count']).where('id', '=', user.id).executeTakeFirstOrThrow()
  t.same(row, { quota: 100_000_000 - expected, used_quota: expected, request_count: events.length }, 'each exactly once: nothing lost, nothing doubled')
  const logs = await db.selectFrom('logs').select([sql<number>`count(*)::int`.as('n'), sql<number>`sum(quota)::bigint`.as('s')]).executeTakeFirstOrThrow()
  t.same({ n: logs.n, s: Number(logs.s) }, { n: events.length, s: expected })
})
