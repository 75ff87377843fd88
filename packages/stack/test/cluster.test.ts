import { configChannel } from '@modelgate/contracts'
import { QuotaStore } from '@modelgate/quota'
import { Redis } from 'ioredis'
import t from 'tap'
import {
  chat, type ChatResult, consoleLogin, fakeUpstream, kill9, ledgerDrift, migratedDatabase, ownRedis, pgProxy, seedAccount, seedChannel,
  serviceEnv, type Service, startService, tick, until
} from './fixtures/system.js'

// Issue 20's cluster on one machine: 3 gateways, 2 billing workers and the control plane on one
// Postgres (behind a TCP proxy, to restart it) and one Redis (of the test's own, to restart it),
// traffic spread over the gateways. Scaled down: reconciliation every second, a request older than
// 4 s counts as orphaned, a dead worker's jobs return after 2 s, a drain of 10 s.

t.test('a cluster of 3 gateways, 2 workers and the control plane: changes, races, kills, drains and outages lose and double nothing', async (t) => {
  const redis = await ownRedis(t)
  const { url: directUrl, db } = await migratedDatabase(t)
  const pg = await pgProxy(t, directUrl)
  const fast = await fakeUpstream(t, { chunks: 3, delayMs: 5 })
  const slow = await fakeUpstream(t, { chunks: 60, delayMs: 100 })
  await seedChannel(db, fast.url, ['gpt-4o-mini'])
  await seedChannel(db, slow.url, ['gpt-4o'])
  const env = serviceEnv(pg.url, redis.url, {
    RECONCILE_INTERVAL_MS: '1000', ORPHAN_RESERVATION_MS: '4000', WORKER_LOCK_MS: '2000', DRAIN_TIMEOUT_MS: '10000', STATE_REFRESH_MS: '5000'
  })
  // First, so that it creates root on the empty users table.
  const cp = await startService(t, 'control-plane', env)
  const seeded = { quota: 100_000_000, remain: 50_000_000 }
  const main = await seedAccount(db, seeded)
  const workers = [await startService(t, 'billing-worker', env), await startService(t, 'billing-worker', env)]
  const gws: Service[] = []
  for (let i = 0; i < 3; i++) gws.push(await startService(t, 'gateway', { ...env, CONTROL_PLANE_URL: cp.url }))
  const figures: string[] = []
  let admitted = 0
  const settledCount = async () => Number((await db.selectFrom('settlements').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n)
  /** A chat request; every one answered 200 was admitted and owes one settlement. */
  const ask = async (url: string, key: string, opts: { stream?: boolean, model?: string, timeoutMs?: number } = {}): Promise<ChatResult> => {
    const r = await chat(url, key, opts)
    if (r.status === 200) admitted++
    return r
  }
  const spread = async (n: number, key: string, opts: { stream?: boolean, model?: string } = {}): Promise<ChatResult[]> =>
    await Promise.all(Array.from({ length: n }, async (_, i) => await ask(gws[i % gws.length]!.url, key, opts)))

  // Traffic over the three gateways.
  const warm = await spread(30, main.key)
  t.ok(warm.every((r) => r.status === 200), '30 requests over 3 gateways answered')

  // A console change reaches every gateway within a second.
  const session = await consoleLogin(cp.url, 'root', '123456')
  const victim = await seedAccount(db)
  for (const gw of gws) t.equal((await ask(gw.url, victim.key)).status, 200, 'the user is served by every gateway (cached)')
  const changedAt = Date.now()
  const res = await fetch(`${cp.url}/api/user/manage`, { method: 'POST', headers: session, body: JSON.stringify({ id: victim.user.id, action: 'disable' }) })
  t.match(await res.json(), { success: true }, 'an admin disables the user in the console')
  const refusedEverywhere = await until(async () => (await Promise.all(gws.map(async (gw) => (await ask(gw.url, victim.key)).status))).every((s) => s === 403), 3_000, 20)
  const changeMs = Date.now() - changedAt
  t.ok(refusedEverywhere && changeMs < 1_000, `a disabled user is refused by all 3 gateways ${changeMs} ms after the change`)
  figures.push(`change on all gateways in ${changeMs} ms`)

  // A quota race across the gateways: a token whose balance covers exactly one request's reservation.
  const quota = new QuotaStore(new Redis(redis.url, { keyPrefix: env['REDIS_KEY_PREFIX'] }))
  t.teardown(() => { quota.redis.disconnect() })
  slow.chunks = 5
  const measured = ask(gws[1]!.url, main.key, { stream: true, model: 'gpt-4o' })
  t.ok(await until(async () => (await quota.openReservations()).length === 1, 10_000), 'one request in flight')
  const reservation = (await quota.openReservations())[0]!.amount
  t.equal((await measured).status, 200)
  const racer = await seedAccount(db, { remain: reservation })
  const race = await spread(50, racer.key, { stream: true, model: 'gpt-4o' })
  const won = race.filter((r) => r.status === 200).length
  t.equal(won, 1, `50 requests over 3 gateways on a balance covering one reservation (${reservation}): ${won} admitted`)
  t.ok(race.filter((r) => r.status !== 200).every((r) => r.status === 403), 'the others refused for quota')
  figures.push(`quota race: ${won} of 50 admitted`)
  // Long enough that they are still streaming when the kill comes, however long the wait before it.
  slow.chunks = 400

  // SIGKILL of a gateway mid-stream: its finished requests settle; its streams' reservations come back by reconciliation.
  const killed = gws[2]!
  const startedSlow = slow.requests
  const doomed = Array.from({ length: 3 }, async () => await chat(killed.url, main.key, { stream: true, model: 'gpt-4o' }))
  await until(() => slow.requests >= startedSlow + 3, 10_000)
  const finished = await Promise.all(Array.from({ length: 10 }, async () => await ask(killed.url, main.key)))
  t.ok(finished.every((r) => r.status === 200), 'the replica answered 10 requests before it was killed')
  // Its finished requests' usage events left it (they are settled) before the kill, so that only
  // the 3 cut streams are orphans whatever the machine's load; the kill still cuts them mid-stream.
  t.ok(await until(async () => await settledCount() >= admitted, 30_000, 100), 'the replica\'s finished requests settled before the kill')
  await kill9(killed)
  const cut = await Promise.all(doomed)
  t.ok(cut.every((r) => !r.text.includes('[DONE]')), 'its streams were cut')
  // Admitted (the upstream had them), whatever the cut left the client with.
  admitted += cut.length
  gws.pop()

  // A worker killed mid-batch: the other one (and the restarted one) settle everything once.
  const burst = spread(120, main.key, { stream: false })
  await tick(150)
  await kill9(workers[0]!)
  const burstResults = await burst
  t.ok(burstResults.every((r) => r.status === 200), '120 requests answered while a worker died')
  workers[0] = await startService(t, 'billing-worker', env)

  // SIGTERM drains a gateway's streams in flight.
  slow.chunks = 20
  const draining = gws[1]!
  const drainFrom = slow.requests
  const inFlight = Array.from({ length: 4 }, async () => await ask(draining.url, main.key, { stream: true, model: 'gpt-4o' }))
  await until(() => slow.requests >= drainFrom + 4, 10_000)
  draining.child.kill('SIGTERM')
  const drained = await Promise.all(inFlight)
  const exited = await draining.exit
  t.ok(drained.every((r) => r.status === 200 && r.text.includes('[DONE]')), 'the 4 streams in flight finished during the drain')
  t.equal(exited.code, 0, 'the gateway exited cleanly')
  gws.pop()

  const settledAll = await until(async () => await settledCount() >= admitted, 40_000, 200)
  const settled = await settledCount()
  t.ok(settledAll, `every admitted request settled (${settled} of ${admitted})`)
  t.equal(settled, admitted, 'exactly once each')
  const estimated = (await db.selectFrom('logs').select('other').where('user_id', '=', main.user.id).execute())
    .filter((r) => JSON.parse(typeof r.other === 'string' ? r.other : JSON.stringify(r.other)).usage_source === 'estimated')
  t.equal(estimated.length, 3, 'the killed gateway\'s 3 streams were settled by reconciliation')
  figures.push(`kills: ${settled} settlements for ${admitted} admitted, ${estimated.length} orphans reconciled`)

  // Redis restarted (empty): a clear 503 while it is down, recovery by itself.
  const gw = gws[0]!
  // Who follows the change channel now: after the restart each service resubscribes and, having
  // maybe missed changes, drops its caches and reloads (the Postgres outage below must come after).
  const changes = configChannel(env['REDIS_KEY_PREFIX']!)
  const subscribers = async (): Promise<number> => {
    const probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 })
    try {
      await probe.connect()
      return Number((await probe.pubsub('NUMSUB', changes) as [string, number])[1])
    } catch {
      return -1
    } finally {
      probe.disconnect()
    }
  }
  const following = await subscribers()
  await redis.stop()
  await tick(1_000)
  const down = await Promise.all(Array.from({ length: 5 }, async () => await ask(gw.url, main.key, { timeoutMs: 10_000 })))
  t.ok(down.every((r) => r.status === 503 && r.ms < 2_500), `relay answers 503 while Redis is down (${down.map((r) => `${r.status}/${r.ms}ms`).join(', ')})`)
  const upAt = Date.now()
  await redis.start()
  const resubscribed = await until(async () => await subscribers() >= following, 30_000, 200)
  t.ok(resubscribed, `every service follows the change channel again (${following})`)
  const back = await until(async () => (await ask(gw.url, main.key)).status === 200, 20_000, 200)
  t.ok(back, `relay answers again ${Date.now() - upAt} ms after Redis is back`)
  figures.push(`Redis down: 503 in ${Math.max(...down.map((r) => r.ms))} ms at most, back after ${Date.now() - upAt} ms`)

  // Postgres restarted: the relay goes on from its caches; settlements catch up.
  pg.cut()
  const during = await Promise.all(Array.from({ length: 10 }, async () => await ask(gw.url, main.key)))
  const servedDuring = during.filter((r) => r.status === 200).length
  t.equal(servedDuring, 10, `the relay served every request while Postgres was down (${during.map((r) => r.status === 200 ? 200 : `${r.status} ${r.text.slice(0, 120)}`).join(', ')})`)
  await tick(1_000)
  pg.restore()
  const caughtUp = await until(async () => await settledCount() >= admitted, 40_000, 200)
  t.ok(caughtUp, 'settlements caught up after Postgres came back')
  t.equal(await settledCount(), admitted, `settlements = admitted (${admitted})`)
  const ledger = await ledgerDrift(db, main.user.id, seeded.quota)
  t.equal(ledger.drift, 0, 'the balance equals the seeded amount minus the settled quota')
  figures.push(`Postgres down: ${servedDuring}/10 served from caches, all settled after; drift ${ledger.drift}`)
  t.comment(`cluster figures: ${figures.join('; ')}`)
})

