import t from 'tap'
import { chat, fakeUpstream, kill9, ledgerDrift, migratedDatabase, ownRedis, seedAccount, seedChannel, serviceEnv, startService, tick, until } from './fixtures/system.js'

// REL-38, scaled down: the maximum request duration (ORPHAN_RESERVATION_MS, default 2 h) is 3 s,
// reconciliation runs every second (RECONCILE_INTERVAL_MS, default 5 min) and a job held by a dead
// worker is taken over after 2 s (WORKER_LOCK_MS, default 30 s).

const count = async (db: Awaited<ReturnType<typeof migratedDatabase>>['db'], table: 'settlements' | 'logs'): Promise<number> =>
  Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n)

t.test('REL-38 crash recovery: kill -9 of the billing worker mid-batch and of a gateway mid-stream; one settlement per admitted request, orphans settled as estimated, no double charge', async (t) => {
  const redis = await ownRedis(t)
  const { url: dbUrl, db } = await migratedDatabase(t)
  const fast = await fakeUpstream(t, { chunks: 3, delayMs: 5 })
  const slow = await fakeUpstream(t, { chunks: 200, delayMs: 100 })
  const seeded = { quota: 100_000_000, remain: 50_000_000 }
  const { user, key } = await seedAccount(db, seeded)
  await seedChannel(db, fast.url, ['gpt-4o-mini'])
  await seedChannel(db, slow.url, ['gpt-4o'])
  const env = serviceEnv(dbUrl, redis.url, { ORPHAN_RESERVATION_MS: '3000', RECONCILE_INTERVAL_MS: '1000', WORKER_LOCK_MS: '2000' })
  const gw1 = await startService(t, 'gateway', env)
  const gw2 = await startService(t, 'gateway', env)
  const worker = await startService(t, 'billing-worker', env)

  // Three streams on replica 1, killed mid-stream.
  const streams = Array.from({ length: 3 }, async () => await chat(gw1.url, key, { stream: true, model: 'gpt-4o' }))
  await until(() => slow.requests >= 3, 10_000)
  // Load on replica 2 while the worker is killed mid-batch.
  const quick: Array<Promise<{ status: number }>> = []
  for (let i = 0; i < 60; i++) {
    quick.push(chat(gw2.url, key, { stream: i % 2 === 0 }))
    if (i === 30) {
      await kill9(worker)
      await kill9(gw1)
    }
    await tick(20)
  }
  const killedSettled = await count(db, 'settlements')
  const answered = (await Promise.all(quick)).filter((r) => r.status === 200).length
  const cut = await Promise.all(streams)
  t.ok(cut.every((r) => !r.text.includes('[DONE]')), 'the streams of the killed replica did not finish')
  t.equal(answered, 60, 'replica 2 answered every request')
  await startService(t, 'billing-worker', env)

  const admitted = answered + 3
  const all = await until(async () => await count(db, 'settlements') >= admitted, 40_000, 250)
  const settlements = await count(db, 'settlements')
  const logs = await count(db, 'logs')
  const estimated = await db.selectFrom('logs').select(['quota', 'content', 'other']).where('request_id', 'is not', null).execute()
  const orphans = estimated.filter((r) => JSON.parse(String(typeof r.other === 'string' ? r.other : JSON.stringify(r.other))).usage_source === 'estimated')
  t.ok(all, 'every admitted request settled after the restart')
  t.equal(settlements, admitted, `settlements ${settlements} = admitted ${admitted} (exactly one each)`)
  t.equal(logs, admitted, `log rows ${logs} = admitted ${admitted}`)
  t.equal(orphans.length, 3, 'the killed replica\'s 3 reservations were settled by reconciliation, flagged estimated')
  t.ok(orphans.every((r) => Number(r.quota) > 0), 'orphans billed at their reservation')
  const ledger = await ledgerDrift(db, user.id, seeded.quota)
  t.equal(ledger.drift, 0, 'no double charge: balance = seeded - settled')
  t.comment(`REL-38 figures: worker and replica 1 killed after 31 of 60 requests (${killedSettled} settled then); ${admitted} admitted, ${settlements} settled, ${logs} log rows, ` +
    `${orphans.length} orphans settled as estimated (${orphans.map((o) => o.quota).join(', ')}); drift ${ledger.drift}`)
})
