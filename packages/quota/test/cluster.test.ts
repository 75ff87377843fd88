import { startRedisCluster, type TestRedisCluster } from '@modelgate/testing'
import { Cluster } from 'ioredis'
import t, { type Test } from 'tap'
import { QuotaStore, type ReserveRequest, userSlot } from '../src/index.js'

// The quota store on a real Redis Cluster of three masters with a replica each, started by the
// test: every reservation's keys share its user's hash slot, a round's reservations go out as one
// script run per slot, and scans cover every master.

let cluster: TestRedisCluster
t.before(async () => { cluster = await startRedisCluster(t) })

function store (t: Test, keyPrefix = 'cq:') {
  const redis = new Cluster(cluster.nodes.slice(0, 1), { keyPrefix, retryDelayOnFailover: 200, retryDelayOnClusterDown: 200 })
  const quota = new QuotaStore(redis)
  t.teardown(() => { quota.stopRenewing(); redis.disconnect() })
  return { quota, redis }
}

/** Counts the script runs a store's client sends (evalsha, and eval on a script's first use). */
function countScripts (redis: Cluster): { runs: string[][], stop: () => void } {
  const c = redis as Cluster & { sendCommand: (cmd: { name: string, args: unknown[] }) => unknown }
  const send = c.sendCommand.bind(c)
  const runs: string[][] = []
  c.sendCommand = (cmd) => {
    if (cmd.name === 'evalsha' || cmd.name === 'eval') runs.push(cmd.args.map(String))
    return send(cmd)
  }
  return { runs, stop: () => { c.sendCommand = send } }
}

const req = (over: Partial<ReserveRequest> = {}): ReserveRequest => ({
  requestId: `r-${Math.random()}`, userId: 1, tokenId: 1, unlimited: false, amount: 100, ttlSeconds: 3600,
  loadUser: async () => 1000, loadToken: async () => 1000, ...over
})

t.test('50 concurrent requests on a balance that covers one are admitted once, across two clients of the cluster', async (t) => {
  const a = store(t, 'c1:')
  const b = store(t, 'c1:')
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).quota.reserve(req({ amount: 700, loadToken: async () => 5000 }))))
  t.equal(results.filter((r) => r.ok).length, 1, 'exactly one admitted')
  t.ok(results.every((r) => r.ok || r.reason === 'user_quota'))
  t.equal(await a.quota.balance('user', 1), 300)
  t.equal(await b.quota.balance('token', 1, 1), 4300)
})

t.test('many users in one round: one script run per hash slot, each reservation and settlement exactly once, keys on every master', async (t) => {
  const { quota, redis } = store(t, 'c2:')
  const users = Array.from({ length: 60 }, (_, i) => 100 + i)
  for (const u of users) {
    await quota.setBalance('user', u, 1000)
    await quota.setBalance('token', u * 10, 1000, u)
  }
  const before = await cluster.masterStats()
  const counted = countScripts(redis)
  // Three requests a user in one round: 300 of each user's 1000.
  const asks = users.flatMap((u) => [1, 2, 3].map((n) => req({ requestId: `m-${u}-${n}`, userId: u, tokenId: u * 10 })))
  const outcomes = await Promise.all(asks.map(async (a) => await quota.reserve(a)))
  counted.stop()
  t.ok(outcomes.every((o) => o.ok), 'every reservation admitted')
  const slots = new Set(users.map(userSlot))
  t.equal(counted.runs.length, slots.size, `one run per slot (${slots.size} slots for ${users.length} users)`)
  for (const run of counted.runs) {
    const keys = run.slice(2, 2 + Number(run[1]))
    t.equal(new Set(keys.map((k) => /\{(\d+)\}/.exec(k)?.[1])).size, 1, 'a run carries one user\'s keys (one slot)')
  }
  for (const u of users) t.equal(await quota.balance('user', u), 700)
  t.equal((await quota.openReservations()).length, asks.length, 'the open reservations are found on every master')

  const deltas = await quota.settleMany(asks.map((a, i) => ({ requestId: a.requestId, userId: a.userId, tokenId: a.tokenId, actual: i % 2 === 0 ? 40 : 100 })))
  t.same(deltas, asks.map((_, i) => (i % 2 === 0 ? 60 : 0)), 'each difference in the order asked')
  t.same(await quota.settleMany(asks.map((a) => ({ requestId: a.requestId, userId: a.userId, tokenId: a.tokenId, actual: 40 }))), asks.map(() => undefined), 'and only once')
  for (const u of users) t.equal(await quota.balance('token', u * 10, u), 1000 - 3 * 100 + (u % 2 === 0 ? 2 : 1) * 60)
  t.equal((await quota.openReservations()).length, 0)

  // The users' keys spread over the masters: each served commands of this test.
  const after = await cluster.masterStats()
  const served = [...after].map(([port, s]) => s.commands - (before.get(port)?.commands ?? 0))
  t.equal(served.length, 3)
  t.ok(served.every((n) => n > 10), `every master took a share (${served.join(', ')} commands)`)
})

t.test('limits, scans, compare-and-set and forget work across masters', async (t) => {
  const { quota, redis } = store(t, 'c3:')
  const limits = { userConcurrency: 2, tokenConcurrency: 0, tokenRpm: 0, tokenTpm: 0, tokens: 0 }
  const held = await Promise.all(Array.from({ length: 5 }, async () => await quota.reserve(req({ userId: 7, tokenId: 70, amount: 1, limits }))))
  t.equal(held.filter((r) => r.ok).length, 2, 'two in flight at most')
  const lease = held.find((r) => r.ok)
  if (lease === undefined || !lease.ok || lease.lease === undefined) throw new Error('no lease')
  quota.release(lease.lease, 0)
  const deadline = Date.now() + 10_000
  let again = false
  while (!again && Date.now() < deadline) again = (await quota.reserve(req({ userId: 7, tokenId: 70, amount: 1, limits }))).ok
  t.ok(again, 'a released lease admits the next')

  for (const u of [11, 12, 13, 14, 15, 16]) await quota.setBalance('user', u, u)
  await quota.setBalance('entitlement', 5, 55, 12)
  const users = await quota.cachedBalances('user')
  t.same(users.filter((b) => b.id > 10).map((b) => [b.id, b.userId, b.value]).sort((x, y) => x[0]! - y[0]!), [11, 12, 13, 14, 15, 16].map((u) => [u, u, u]), 'every master scanned')
  t.same(await quota.cachedBalances('entitlement'), [{ id: 5, userId: 12, value: 55 }], 'an item with its owner')
  t.equal(await quota.compareAndSet('entitlement', 5, 12, 54, 60), false, 'a changed value is left alone')
  t.equal(await quota.compareAndSet('entitlement', 5, 12, 55, 60), true)
  t.equal(await quota.balance('entitlement', 5, 12), 60)
  await quota.forget('user', [11, 12, 13, 14, 15, 16])
  t.same((await quota.cachedBalances('user')).filter((b) => b.id > 10), [], 'forgotten on whichever master held each')

  // Balances cached under an earlier release's names (no hash tag), on several masters.
  for (const k of ['bal:u:1', 'bal:u:2', 'bal:t:3', 'bal:e:4']) await redis.set(k, '1')
  t.equal(await quota.dropLegacyBalances(), 4, 'old balance keys are dropped from every master')
  t.equal(await quota.balance('user', 7) !== undefined, true, 'the current ones stay')
})

t.test('a master failing over to its replica mid-load: the store carries on, and every admitted request settles exactly once', async (t) => {
  const { quota } = store(t, 'c4:')
  const users = Array.from({ length: 30 }, (_, i) => 500 + i)
  for (const u of users) {
    await quota.setBalance('user', u, 1_000_000)
    await quota.setBalance('token', u, 1_000_000, u)
  }
  const victim = userSlot(users[0]!)
  const admitted: ReserveRequest[] = []
  let failed = 0
  let n = 0
  let stop = false
  const load = (async () => {
    while (!stop) {
      const round = users.map((u) => req({ requestId: `f-${n++}`, userId: u, tokenId: u, amount: 10, loadUser: async () => 1_000_000, loadToken: async () => 1_000_000 }))
      const outcomes = await Promise.allSettled(round.map(async (r) => await quota.reserve(r)))
      outcomes.forEach((o, i) => { if (o.status === 'fulfilled' && o.value.ok) admitted.push(round[i]!); else failed++ })
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  while (admitted.length < 300) await new Promise((resolve) => setTimeout(resolve, 20))
  const killed = await cluster.failover(victim)
  const afterFailover = admitted.length
  const deadline = Date.now() + 20_000
  while (admitted.length < afterFailover + 300 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  stop = true
  await load
  t.ok(admitted.length >= afterFailover + 300, `admitting again after the failover of ${killed} (${admitted.length} admitted, ${failed} failed while it failed over)`)
  t.notOk((await cluster.masters()).includes(killed), 'the replica took over')

  // Redis replicates asynchronously: a reservation acknowledged just before the master died may
  // be gone from its replica. Settlement then finds nothing to correct (the billing worker still
  // bills Postgres, the system of record, and reconciliation repairs the cached balance); what
  // was kept settles exactly once.
  const settled = await quota.settleMany(admitted.map((r) => ({ requestId: r.requestId, userId: r.userId, tokenId: r.tokenId, actual: 4 })))
  const found = settled.filter((d) => d !== undefined)
  t.ok(found.every((d) => d === 6), 'each reservation found gives back its difference')
  t.ok(found.length >= admitted.length - 200, `all but the last moments' writes survived (${found.length} of ${admitted.length})`)
  t.same(await quota.settleMany(admitted.map((r) => ({ requestId: r.requestId, userId: r.userId, tokenId: r.tokenId, actual: 4 }))), admitted.map(() => undefined), 'and none twice')
  t.equal((await quota.openReservations()).length, 0, 'nothing left open')
  t.ok(await quota.balance('user', users[1]!) !== undefined, 'the balances are still served')
})
