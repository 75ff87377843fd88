import t from 'tap'
import { chat, fakeUpstream, migratedDatabase, ownRedis, seedAccount, seedChannel, serviceEnv, startService, tick, until } from './fixtures/system.js'

// REL-39, scaled down: 20 streams on replica 1 of two, SIGTERM; the drain timeout is 4 s
// (DRAIN_TIMEOUT_MS; default 120 s). 15 streams last about 2 s and complete within it; 5 last
// about 20 s and are cut at the deadline with an error event.
const DRAIN_MS = 4_000

t.test('REL-39 graceful shutdown: readiness fails at once, new requests refused, streams drain or are cut with an error event at the deadline, every usage event queued, exit 0', async (t) => {
  const redis = await ownRedis(t)
  const { url: dbUrl, db } = await migratedDatabase(t)
  const short = await fakeUpstream(t, { chunks: 20, delayMs: 100 })
  const long = await fakeUpstream(t, { chunks: 200, delayMs: 100 })
  const { key } = await seedAccount(db)
  await seedChannel(db, short.url, ['gpt-4o-mini'])
  await seedChannel(db, long.url, ['gpt-4o'])
  const env = serviceEnv(dbUrl, redis.url, { DRAIN_TIMEOUT_MS: String(DRAIN_MS) })
  const gw1 = await startService(t, 'gateway', env)
  const gw2 = await startService(t, 'gateway', env)
  await startService(t, 'billing-worker', env)

  const streams = [
    ...Array.from({ length: 15 }, async () => await chat(gw1.url, key, { stream: true })),
    ...Array.from({ length: 5 }, async () => await chat(gw1.url, key, { stream: true, model: 'gpt-4o' }))
  ]
  t.ok(await until(() => short.requests + long.requests >= 20, 10_000), '20 streams running on replica 1')
  await tick(200)

  const termAt = Date.now()
  gw1.child.kill('SIGTERM')
  // Readiness fails at once: 503 while closing, or the connection refused once the listener is closed.
  let readyStatus = 200
  const readyFailed = await until(async () => {
    const res = await fetch(`${gw1.url}/readyz`).catch(() => undefined)
    readyStatus = res?.status ?? 0
    return res === undefined || res.status === 503
  }, 2_000, 10)
  const readyMs = Date.now() - termAt
  t.ok(readyFailed && readyMs < 1_000, `readiness failed ${readyMs} ms after SIGTERM (${readyStatus === 0 ? 'connection refused' : readyStatus})`)
  const late = await chat(gw1.url, key, { timeoutMs: 5_000 })
  t.ok(late.status === 503 || late.status === 0, `a new request to the closing replica: ${late.status === 0 ? 'connection refused' : late.status}`)
  t.equal((await chat(gw2.url, key)).status, 200, 'the other replica serves it')

  const results = await Promise.all(streams)
  const { code, signal } = await gw1.exit
  const exitMs = Date.now() - termAt
  const completed = results.slice(0, 15)
  const cut = results.slice(15)
  for (const r of completed) t.ok(r.status === 200 && r.text.includes('data: [DONE]') && !r.text.includes('"error"'), 'a stream shorter than the drain completed')
  for (const r of cut) {
    t.equal(r.status, 200, 'a long stream was running')
    t.match(r.text, /"error"/, 'a stream still running at the drain deadline ends with an error event')
    t.notMatch(r.text, /data: \[DONE\]/, 'not with a clean finish')
  }
  t.equal(code, 0, `exit code 0 (signal ${String(signal)})`)
  t.ok(exitMs >= DRAIN_MS - 500 && exitMs < DRAIN_MS + 10_000, `exited ${exitMs} ms after SIGTERM (drain ${DRAIN_MS} ms)`)

  // Every admitted request's usage event was queued before exit: all 20 streams (and the request
  // on replica 2) settle; the cut ones billed for what was streamed.
  const settled = await until(async () => Number((await db.selectFrom('settlements').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n) >= 21, 20_000, 200)
  const rows = await db.selectFrom('logs').select(['quota', 'content', 'completion_tokens']).where('model_name', '=', 'gpt-4o').execute()
  t.ok(settled, 'all 21 admitted requests settled (20 streams of the stopped replica + 1)')
  t.equal(rows.length, 5, 'the 5 cut streams have their log rows')
  t.ok(rows.every((r) => Number(r.quota) > 0 && r.completion_tokens > 0), 'cut streams billed for what was streamed')
  t.comment(`REL-39 figures: drain ${DRAIN_MS} ms; readiness failed after ${readyMs} ms; late request ${late.status === 0 ? 'refused' : late.status}; ` +
    `${completed.filter((r) => r.text.includes('[DONE]')).length}/15 completed, ${cut.filter((r) => r.text.includes('"error"')).length}/5 cut with an error event; ` +
    `exit ${String(code)} after ${exitMs} ms; cut streams billed ${rows.map((r) => `${r.completion_tokens} tokens`).join(', ')}`)
})
