import { randomBytes } from 'node:crypto'
import { tokenKeyHash } from '@modelgate/service'
import t from 'tap'
import { box, chat, consoleLogin, fakeUpstream, migratedDatabase, ownRedis, pgProxy as tcpProxy, seedAccount, seedChannel, serviceEnv, type Service, startService, tick, until } from './fixtures/system.js'

// REL-40, scaled down: the periodic refresh (STATE_REFRESH_MS, default 60 s) is 3 s. The lost
// message: the gateways reach Redis through a TCP proxy that is cut (their subscriptions drop, as
// when Redis restarts) while the console makes its changes and publishes them; then restored.
// (With Redis itself down, the console refuses these changes with a 503, so nothing is lost.)
const REFRESH_MS = 3_000

t.test('REL-40 config propagation: token, user, channel and ratio changes reach all 3 replicas within 1 s, and after a lost change message within the refresh interval', async (t) => {
  const redis = await ownRedis(t)
  const { url: dbUrl, db } = await migratedDatabase(t)
  const upstream = await fakeUpstream(t, { chunks: 2, delayMs: 1 })
  const env = serviceEnv(dbUrl, redis.url, { STATE_REFRESH_MS: String(REFRESH_MS) })
  const cp = await startService(t, 'control-plane', env)
  const session = await consoleLogin(cp.url, 'root', '123456')
  const rootId = Number(session['new-api-user'])
  const rootToken = async () => {
    const key = `sk-${randomBytes(24).toString('hex')}`
    const row = await db.insertInto('tokens').values({
      user_id: rootId, name: 'rel40', key_hash: tokenKeyHash(key), key_encrypted: box.seal(key), remain_quota: 50_000_000, unlimited_quota: false,
      status: 1, expired_time: -1, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '', rpm_limit: 0, tpm_limit: 0, concurrency_limit: 0, deleted_at: null
    }).returningAll().executeTakeFirstOrThrow()
    return { id: row.id, key }
  }
  const tokens = [await rootToken(), await rootToken()]
  const users = [await seedAccount(db), await seedAccount(db)]
  // Never changed: probes the channels and the ratio.
  const probe = await seedAccount(db)
  const channels = [await seedChannel(db, upstream.url, ['gpt-4o']), await seedChannel(db, upstream.url, ['gpt-5.5'])]
  await seedChannel(db, upstream.url, ['gpt-4o-mini'])
  await startService(t, 'billing-worker', env)
  const gws: Service[] = []
  const redisProxy = await tcpProxy(t, redis.url)
  for (let i = 0; i < 3; i++) gws.push(await startService(t, 'gateway', { ...env, REDIS_URL: redisProxy.url, CONTROL_PLANE_URL: cp.url }))
  const api = async (method: string, path: string, body: unknown) =>
    await fetch(`${cp.url}${path}`, { method, headers: session, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, text: await r.text() }))

  // Warm every replica's caches with every key and model.
  for (const gw of gws) {
    for (const k of [...tokens.map((x) => x.key), ...users.map((u) => u.key), probe.key]) t.equal((await chat(gw.url, k)).status, 200, 'warm')
    t.equal((await chat(gw.url, probe.key, { model: 'gpt-4o' })).status, 200, 'warm gpt-4o')
    t.equal((await chat(gw.url, probe.key, { model: 'gpt-5.5' })).status, 200, 'warm gpt-5.5')
  }

  /** Milliseconds until every replica refuses for the change (not because its Redis is away), polled in parallel. */
  const untilRefused = async (key: string, model: string, ms: number) => {
    const started = Date.now()
    const refused = (r: { status: number, text: string }) => r.status !== 200 && r.status !== 0 && !r.text.includes('quota_store_unavailable')
    const done = await Promise.all(gws.map(async (gw) => await until(async () => refused(await chat(gw.url, key, { model })), ms, 20)))
    return { ok: done.every(Boolean), ms: Date.now() - started }
  }
  const ratioOf = async (n: number) => (await db.selectFrom('logs').select('other').orderBy('id', 'desc').limit(n).execute())
    .map((r) => (typeof r.other === 'string' ? JSON.parse(r.other) : r.other) as { model_ratio?: number }).map((o) => o.model_ratio)
  const ratioBilled = async (ratio: number) => {
    await tick(1_000)
    for (const gw of gws) t.equal((await chat(gw.url, probe.key)).status, 200)
    return await until(async () => (await ratioOf(3)).every((r) => r === ratio), 15_000, 200)
  }
  const figures: string[] = []

  const round = async (i: number, lost: boolean) => {
    const label = lost ? 'after a lost message' : 'by pub/sub'
    const limit = lost ? REFRESH_MS + 1_000 : 1_000
    if (lost) redisProxy.cut()
    const changes = [
      api('PUT', '/api/token/?status_only=true', { id: tokens[i]!.id, status: 2 }),
      api('POST', '/api/user/manage', { id: users[i]!.user.id, action: 'disable' }),
      api('PUT', '/api/channel/', { id: channels[i]!.id, status: 2 }),
      api('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ 'gpt-4o-mini': 2 + i, 'gpt-4o': 1.25, 'gpt-5.5': 1 }) })
    ]
    const answers = await Promise.all(changes)
    for (const a of answers) t.equal(a.status, 200, 'console change accepted')
    if (lost) {
      await tick(500)
      redisProxy.restore()
    }
    const [token, user, channel] = await Promise.all([
      untilRefused(tokens[i]!.key, 'gpt-4o-mini', limit + 5_000),
      untilRefused(users[i]!.key, 'gpt-4o-mini', limit + 5_000),
      untilRefused(probe.key, i === 0 ? 'gpt-4o' : 'gpt-5.5', limit + 5_000)
    ])
    t.ok(token.ok && token.ms <= limit, `token disabled on all 3 replicas ${label} in ${token.ms} ms (limit ${limit})`)
    t.ok(user.ok && user.ms <= limit, `user banned on all 3 replicas ${label} in ${user.ms} ms`)
    t.ok(channel.ok && channel.ms <= limit, `channel disabled on all 3 replicas ${label} in ${channel.ms} ms`)
    const billed = await ratioBilled(2 + i)
    t.ok(billed, `requests on all 3 replicas billed at the new ratio ${2 + i} after the window ${label} (${JSON.stringify(await ratioOf(3))})`)
    figures.push(`${label}: token ${token.ms} ms, user ${user.ms} ms, channel ${channel.ms} ms, ratio billed new: ${String(billed)}`)
  }

  await round(0, false)
  // The gateways' Redis connections cut: the change messages published meanwhile are lost to them.
  await round(1, true)
  t.comment(`REL-40 figures (refresh ${REFRESH_MS} ms): ${figures.join('; ')}`)
})
