import { randomUUID } from 'node:crypto'
import { OptionValues, type UsageEvent } from '@modelgate/contracts'
import { type SettlementInput, settleUsage, settleUsageBatch, sql } from '@modelgate/db'
import { reservationKey } from '@modelgate/quota'
import t, { type Test } from 'tap'
import { SettlementBatcher } from '../src/jobs/settle-usage/batcher.js'
import { run } from '../src/jobs/settle-usage/handler.js'
import { runningWorker, settleSetup } from './fixtures.js'

const setup = async (t: Test) => await settleSetup(t, 'payer')

function event (over: Partial<UsageEvent> & Pick<UsageEvent, 'user_id' | 'token_id' | 'channel_id'>): UsageEvent {
  return {
    request_id: randomUUID(), created_at: Math.floor(Date.now() / 1000), username: 'payer', token_name: 'tok', unlimited_token: false,
    model_name: 'gpt-4o-mini', upstream_model: 'gpt-4o-mini', group: 'default', is_stream: false, ip: '127.0.0.1',
    use_time_ms: 1200, first_response_ms: 300, prompt_tokens: 100, completion_tokens: 50, cached_tokens: 0,
    reserved: 1000, quota: 400, outcome: 'success', usage_source: 'upstream', price: { model_ratio: 1, completion_ratio: 2, group_ratio: 2, model_price: -1 },
    retried_channels: [], ...over
  }
}

t.test('an event settles once, however often it is delivered', async (t) => {
  const s = await setup(t)
  await s.quota.reserve({ requestId: 'req-1', userId: s.user.id, tokenId: s.token.id, unlimited: false, amount: 1000, ttlSeconds: 60, loadUser: async () => s.user.quota, loadToken: async () => s.token.remain_quota })
  const e = event({ request_id: 'req-1', user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, reserved: 1000, quota: 400 })
  t.same(await run({ id: e.request_id, data: e }, s.deps), { settled: true, delta: 600 })
  t.same(await run({ id: e.request_id, data: e }, s.deps), { settled: false, delta: undefined }, 'the second delivery changes nothing')
  const user = await s.db.selectFrom('users').select(['quota', 'used_quota', 'request_count']).where('id', '=', s.user.id).executeTakeFirstOrThrow()
  t.same(user, { quota: 999_600, used_quota: 400, request_count: 1 })
  const token = await s.db.selectFrom('tokens').select(['remain_quota', 'used_quota']).where('id', '=', s.token.id).executeTakeFirstOrThrow()
  t.same(token, { remain_quota: 499_600, used_quota: 400 })
  t.equal((await s.db.selectFrom('channels').select('used_quota').where('id', '=', s.channel.id).executeTakeFirstOrThrow()).used_quota, 400)
  const logs = await s.db.selectFrom('logs').selectAll().execute()
  t.equal(logs.length, 1)
  t.match(logs[0], { type: 2, quota: 400, prompt_tokens: 100, completion_tokens: 50, use_time: 1, request_id: 'req-1', model_name: 'gpt-4o-mini', channel_id: s.channel.id })
  t.match(logs[0]!.other, { model_ratio: 1, completion_ratio: 2, group_ratio: 2, frt: 300, admin_info: { use_channel: [s.channel.id] } })
  const bucket = await s.db.selectFrom('quota_data').selectAll().execute()
  t.match(bucket, [{ user_id: s.user.id, model_name: 'gpt-4o-mini', count: 1, quota: 400, token_used: 150 }])
  t.equal(bucket[0]!.created_at % 3600, 0)
  t.equal(await s.quota.balance('user', s.user.id), user.quota, 'Redis matches Postgres after settlement')
  t.equal(await s.quota.balance('token', s.token.id, s.token.user_id), token.remain_quota)
})

t.test('an event with audio tokens records the text and audio split in the log', async (t) => {
  const s = await setup(t)
  const e = event({
    user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, prompt_tokens: 1000, completion_tokens: 300,
    audio_prompt_tokens: 400, audio_completion_tokens: 200, quota: 18_000,
    price: { model_ratio: 1.25, completion_ratio: 4, group_ratio: 1, model_price: -1, audio_ratio: 16, audio_completion_ratio: 2 }
  })
  await run({ id: e.request_id, data: e }, s.deps)
  const log = await s.db.selectFrom('logs').select(['quota', 'other']).executeTakeFirstOrThrow()
  t.equal(log.quota, 18_000)
  t.match(log.other, { audio_ratio: 16, audio_completion_ratio: 2, audio: true, text_input: 600, text_output: 100, audio_input: 400, audio_output: 200 })
  const plain = event({ user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id })
  await run({ id: plain.request_id, data: plain }, s.deps)
  const other = (await s.db.selectFrom('logs').select('other').where('request_id', '=', plain.request_id).executeTakeFirstOrThrow()).other
  t.notOk('audio' in (other as Record<string, unknown>), 'requests without audio carry no audio fields')
})

t.test('a failed request bills nothing and an error log explains it; logs can be switched off', async (t) => {
  const s = await setup(t)
  await run({ id: '1', data: event({ user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, outcome: 'failed', quota: 0, prompt_tokens: 0, completion_tokens: 0, error: { status: 502, message: 'all upstreams failed' } }) }, s.deps)
  const log = await s.db.selectFrom('logs').select(['type', 'content', 'quota']).executeTakeFirstOrThrow()
  t.same(log, { type: 5, content: 'all upstreams failed', quota: 0 })
  t.equal((await s.db.selectFrom('users').select('request_count').where('id', '=', s.user.id).executeTakeFirstOrThrow()).request_count, 0)
  s.setLogs(false)
  await run({ id: '2', data: event({ user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 250 }) }, s.deps)
  t.equal((await s.db.selectFrom('logs').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n, 1, 'no consume log while LogConsumeEnabled is off')
  t.equal((await s.db.selectFrom('users').select('quota').where('id', '=', s.user.id).executeTakeFirstOrThrow()).quota, 1_000_000 - 250, 'but the balance still settles')
})

t.test('a malformed event fails for good instead of retrying', async (t) => {
  const s = await setup(t)
  await t.rejects(run({ id: 'x', data: { request_id: 'x', quota: -5 } }, s.deps), { name: 'UnrecoverableError', message: /malformed usage event/ })
})

t.test('a gateway batch settles its events together; a malformed one fails the job after the good ones settle', async (t) => {
  const s = await setup(t)
  const events = [1, 2, 3].map((i) => event({ request_id: `b${i}`, user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 100 * i }))
  t.same(await run({ id: 'b1+3', data: { events } }, s.deps), { settled: 3, events: 3 })
  t.same(await run({ id: 'b1+3', data: { events } }, s.deps), { settled: 0, events: 3 }, 'a redelivered batch settles nothing twice')
  t.equal((await s.db.selectFrom('users').select('quota').where('id', '=', s.user.id).executeTakeFirstOrThrow()).quota, 1_000_000 - 600)
  const good = event({ request_id: 'b4', user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 50 })
  await t.rejects(run({ id: 'b4+2', data: { events: [good, { request_id: 'b5', quota: -1 }] } }, s.deps), { name: 'UnrecoverableError', message: /1 of 2 events malformed/ })
  t.equal((await s.db.selectFrom('users').select('quota').where('id', '=', s.user.id).executeTakeFirstOrThrow()).quota, 1_000_000 - 650, 'the good event of the poisoned batch is billed')
  t.equal((await s.db.selectFrom('logs').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n, 4)
})

t.test('when Postgres refuses one event of a batch, the others still get their Redis correction and the job is retried', async (t) => {
  const s = await setup(t)
  const load = { loadUser: async () => s.user.quota, loadToken: async () => s.token.remain_quota }
  await s.quota.reserve({ requestId: 'ok-1', userId: s.user.id, tokenId: s.token.id, unlimited: false, amount: 1000, ttlSeconds: 60, ...load })
  await s.quota.reserve({ requestId: 'bad-1', userId: s.user.id, tokenId: s.token.id, unlimited: false, amount: 1000, ttlSeconds: 60, ...load })
  const ok = event({ request_id: 'ok-1', user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 400 })
  const bad = event({ request_id: 'bad-1', user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 300 })
  let refuse = true
  const deps = { ...s.deps, settle: async (e: SettlementInput, writeLog: boolean) => {
    if (refuse && e.request_id === 'bad-1') throw new Error('Postgres said no')
    return await settleUsage(s.db, e, { writeLog })
  } }
  await t.rejects(run({ id: 'ok-1+2', data: { events: [ok, bad] } }, deps), { message: 'Postgres said no' })
  t.equal(await s.quota.balance('user', s.user.id), s.user.quota - 400 - 1000, 'ok-1 corrected to its cost; bad-1 still holds its reservation')
  refuse = false
  t.same(await run({ id: 'ok-1+2', data: { events: [ok, bad] } }, deps), { settled: 1, events: 2 }, 'the retry settles the refused one only')
  t.equal(await s.quota.balance('user', s.user.id), s.user.quota - 700)
  t.equal((await s.db.selectFrom('users').select('quota').where('id', '=', s.user.id).executeTakeFirstOrThrow()).quota, s.user.quota - 700)
})

t.test('after 10,000 random events settled in batches, balances equal the sums of the logs', async (t) => {
  const s = await setup(t)
  const users = [s.user, ...await Promise.all([1, 2, 3].map((i) => s.db.insertInto('users').values({ username: `p${i}`, quota: 5_000_000, access_token_hash: null, aff_code: null, deleted_at: null, setting: {} }).returningAll().executeTakeFirstOrThrow()))]
  let seed = 7
  const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  const events = Array.from({ length: 10_000 }, () => {
    const u = users[rand(users.length)]!
    return event({ user_id: u.id, token_id: 0, channel_id: s.channel.id, quota: rand(5000), outcome: rand(10) === 0 ? 'aborted' : 'success', model_name: ['a', 'b', 'c'][rand(3)]! })
  })
  // Delivered with duplicates (some inside one batch) and out of order, 64 at a time, batched.
  const deliveries = [...events, ...events.filter((_, i) => i % 7 === 0)].sort(() => rand(3) - 1)
  const batcher = new SettlementBatcher(s.db, { max: 64, waitMs: 10 })
  const deps = { ...s.deps, settle: async (e: SettlementInput, writeLog: boolean) => await batcher.settle(e, writeLog) }
  for (let i = 0; i < deliveries.length; i += 64) {
    await Promise.all(deliveries.slice(i, i + 64).map((e) => run({ id: e.request_id, data: e }, deps)))
  }
  for (const u of users) {
    const row = await s.db.selectFrom('users').select(['quota', 'used_quota']).where('id', '=', u.id).executeTakeFirstOrThrow()
    const sum = await s.db.selectFrom('logs').select(sql<number>`coalesce(sum(quota), 0)::bigint`.as('s')).where('user_id', '=', u.id).executeTakeFirstOrThrow()
    const expected = events.filter((e) => e.user_id === u.id).reduce((a, e) => a + e.quota, 0)
    t.equal(Number(sum.s), expected, `logs of user ${u.id} sum to the events`)
    t.equal(row.used_quota, expected)
    t.equal(row.quota, u.quota - expected, 'balance = initial - sum of logs')
  }
  const buckets = await s.db.selectFrom('quota_data').select(sql<number>`sum(quota)::bigint`.as('s')).executeTakeFirstOrThrow()
  t.equal(Number(buckets.s), events.reduce((a, e) => a + e.quota, 0), 'the dashboard buckets hold the same total')
})

t.test('batches spread over many users, tokens and channels settle exactly, concurrently, without deadlocks', async (t) => {
  const s = await setup(t)
  const users = [s.user, ...await Promise.all([1, 2, 3].map((i) => s.db.insertInto('users').values({ username: `m${i}`, quota: 5_000_000, access_token_hash: null, aff_code: null, deleted_at: null, setting: {} }).returningAll().executeTakeFirstOrThrow()))]
  const tokens = await Promise.all(users.map((u, i) => s.db.insertInto('tokens').values({ user_id: u.id, key_hash: randomUUID(), key_encrypted: 'x', remain_quota: 1_000_000, unlimited_quota: i === 3, deleted_at: null }).returningAll().executeTakeFirstOrThrow()))
  const channels = await Promise.all(Array.from({ length: 40 }, () => s.db.insertInto('channels').values({ key: 'k', openai_organization: null, tag: null, other_info: {} }).returningAll().executeTakeFirstOrThrow()))
  const all: UsageEvent[] = []
  for (let round = 0; round < 15; round++) {
    // Two batches touching the same rows, listed in opposite orders, settled at the same time.
    const batch = Array.from({ length: 60 }, (_, i) => {
      const k = i % users.length
      return event({ user_id: users[k]!.id, token_id: tokens[k]!.id, unlimited_token: tokens[k]!.unlimited_quota, channel_id: channels[(i * 7 + round) % channels.length]!.id, quota: 1 + ((i * 31 + round * 17) % 900) })
    })
    const other = batch.map((e) => ({ ...e, request_id: randomUUID() })).reverse()
    all.push(...batch, ...other)
    const [a, b] = await Promise.all([settleUsageBatch(s.db, batch, { writeLog: true }), settleUsageBatch(s.db, other, { writeLog: true })])
    for (const e of batch) t.ok(a.get(e.request_id) !== undefined, 'each new event reports its payer')
    for (const e of other) t.ok(b.get(e.request_id) !== undefined)
  }
  const sumBy = (key: (e: UsageEvent) => number, id: number, value: (e: UsageEvent) => number = (e) => e.quota) => all.filter((e) => key(e) === id).reduce((n, e) => n + value(e), 0)
  for (const u of users) {
    const row = await s.db.selectFrom('users').select(['quota', 'used_quota', 'request_count']).where('id', '=', u.id).executeTakeFirstOrThrow()
    t.same(row, { quota: u.quota - sumBy((e) => e.user_id, u.id), used_quota: sumBy((e) => e.user_id, u.id), request_count: all.filter((e) => e.user_id === u.id).length })
  }
  for (const tk of tokens) {
    const row = await s.db.selectFrom('tokens').select(['remain_quota', 'used_quota']).where('id', '=', tk.id).executeTakeFirstOrThrow()
    const used = sumBy((e) => e.token_id, tk.id)
    t.same(row, { remain_quota: tk.unlimited_quota ? tk.remain_quota : tk.remain_quota - used, used_quota: used }, `token ${tk.id}${tk.unlimited_quota ? ' (unlimited: remain untouched)' : ''}`)
  }
  const rows = await s.db.selectFrom('channels').select(['id', 'used_quota']).where('id', 'in', channels.map((c) => c.id)).execute()
  t.equal(rows.length, channels.length)
  for (const c of rows) t.equal(c.used_quota, sumBy((e) => e.channel_id, c.id), `channel ${c.id}`)
  const again = await settleUsageBatch(s.db, all.slice(0, 60), { writeLog: true })
  t.ok([...again.values()].every((v) => v === undefined), 'a redelivered batch settles nothing')
  t.equal(Number((await s.db.selectFrom('logs').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()).n), all.length)
})

t.test('a batch keeps every character of names, messages and prices in its log rows', async (t) => {
  const s = await setup(t)
  const odd = 'a"b\\c,{d} e\'f NULL 你好 🎉'
  const events = [
    event({ user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, username: odd, token_name: `${odd}-t`, model_name: 'm,{1}', group: '"g"', ip: '::1' }),
    event({ user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, outcome: 'failed', quota: 0, error: { status: 400, message: `bad "input": ${odd}` }, price: { model_ratio: 0.075, completion_ratio: 4, group_ratio: 1, model_price: -1 } })
  ]
  await settleUsageBatch(s.db, events, { writeLog: true })
  const rows = await s.db.selectFrom('logs').selectAll().orderBy('id').execute()
  t.match(rows, [
    { username: odd, token_name: `${odd}-t`, model_name: 'm,{1}', group: '"g"', ip: '::1', type: 2, quota: 400, request_id: events[0]!.request_id, content: '', is_stream: false },
    { type: 5, quota: 0, content: `bad "input": ${odd}` }
  ])
  t.match(rows[1]!.other, { model_ratio: 0.075, completion_ratio: 4, outcome: 'failed', admin_info: { use_channel: [s.channel.id] } })
  t.equal((await s.db.selectFrom('settlements').select('request_id').execute()).length, 2)
})

t.test('the running worker settles what the gateway queued', async (t) => {
  const s = await setup(t)
  const queue = await runningWorker(t, s.env)
  const events = Array.from({ length: 20 }, () => event({ user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 100 }))
  for (const e of events) await queue.add('settle', e, { jobId: e.request_id })
  await queue.add('settle', events[0]!, { jobId: events[0]!.request_id })
  const deadline = Date.now() + 10_000
  let quota = 0
  while (Date.now() < deadline) {
    quota = (await s.db.selectFrom('users').select('quota').where('id', '=', s.user.id).executeTakeFirstOrThrow()).quota
    if (quota === 1_000_000 - 2000) break
    await new Promise((r) => setTimeout(r, 50))
  }
  t.equal(quota, 1_000_000 - 2000, 'twenty events settled once each')
  // Postgres unable to settle for a while (here: its table is gone): the event waits and retries.
  await sql`alter table settlements rename to settlements_away`.execute(s.db)
  const late = event({ user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 100 })
  await queue.add('settle', late, { jobId: late.request_id, attempts: Number.MAX_SAFE_INTEGER, backoff: { type: 'capped' } })
  await new Promise((r) => setTimeout(r, 1500))
  t.ok((await queue.getJob(late.request_id))!.attemptsMade >= 1, 'it failed at least once')
  await sql`alter table settlements_away rename to settlements`.execute(s.db)
  const retryDeadline = Date.now() + 15_000
  while (Date.now() < retryDeadline && quota !== 1_000_000 - 2100) {
    quota = (await s.db.selectFrom('users').select('quota').where('id', '=', s.user.id).executeTakeFirstOrThrow()).quota
    await new Promise((r) => setTimeout(r, 100))
  }
  t.equal(quota, 1_000_000 - 2100, 'settled once Postgres could take it again')

  await queue.add('settle', { broken: true }, { jobId: 'poison' })
  let failed: string | undefined
  while (Date.now() < retryDeadline + 5000 && failed === undefined) {
    failed = (await queue.getJob('poison'))?.failedReason
    if (failed === undefined) await new Promise((r) => setTimeout(r, 50))
  }
  t.match(failed, /malformed usage event/, 'a poison event lands in the failed set with its reason')
})

t.test('reconciliation repairs drifted balances but never touches an account with a request in flight', async (t) => {
  const { run: reconcile } = await import('../src/jobs/reconcile-balances/handler.js')
  const s = await setup(t)
  const load = { loadUser: async () => s.user.quota, loadToken: async () => s.token.remain_quota }
  // A reservation that expired before its settlement: Redis keeps the hold, Postgres bills the cost.
  await s.quota.reserve({ requestId: 'late', userId: s.user.id, tokenId: s.token.id, unlimited: false, amount: 1000, ttlSeconds: 60, ...load })
  await s.redis.del(reservationKey(s.user.id, 'late'))
  const e = event({ request_id: 'late', user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 400 })
  t.same(await run({ id: e.request_id, data: e }, s.deps), { settled: true, delta: undefined }, 'no reservation left to correct')
  t.equal(await s.quota.balance('user', s.user.id), 999_000, 'Redis drifted')
  const other = await s.db.insertInto('users').values({ username: 'busy', quota: 50_000, access_token_hash: null, aff_code: null, deleted_at: null, setting: {} }).returningAll().executeTakeFirstOrThrow()
  await s.quota.setBalance('user', other.id, 1)
  await s.quota.reserve({ requestId: 'inflight', userId: other.id, tokenId: 999, unlimited: true, amount: 1, ttlSeconds: 60, loadUser: async () => 1, loadToken: async () => 0 })
  const gone = await s.db.insertInto('users').values({ username: 'gone', quota: 5, access_token_hash: null, aff_code: null, deleted_at: 1, setting: {} }).returningAll().executeTakeFirstOrThrow()
  await s.quota.setBalance('user', gone.id, 5)
  // Balances an earlier release cached under its key names (no hash tag): dropped, nothing else.
  await s.redis.mset(`bal:u:${s.user.id}`, '1', `bal:t:${s.token.id}`, '2', 'bal:e:3', '3')

  const result = await reconcile({ db: s.db, quota: s.quota })
  t.same(await s.redis.exists(`bal:u:${s.user.id}`, `bal:t:${s.token.id}`, 'bal:e:3'), 0, 'the old releases\' balance keys are gone')
  t.equal(result.legacy, 3)
  t.equal(await s.quota.balance('user', s.user.id), 999_600, 'repaired to the Postgres balance')
  t.equal(await s.quota.balance('token', s.token.id, s.token.user_id), 499_600)
  t.equal(await s.quota.balance('user', other.id), 0, 'an account with a request in flight is left alone')
  t.equal(await s.quota.balance('user', gone.id), undefined, 'a deleted user\'s cache is dropped')
  t.match(result, { repaired: 2, busy: 1 })
  t.match(await reconcile({ db: s.db, quota: s.quota }), { repaired: 0 }, 'a second run finds nothing to do')
})

t.test('after a Redis flush, balances come back from Postgres', async (t) => {
  const s = await setup(t)
  await s.quota.reserve({ requestId: 'a', userId: s.user.id, tokenId: s.token.id, unlimited: false, amount: 1000, ttlSeconds: 60, loadUser: async () => s.user.quota, loadToken: async () => s.token.remain_quota })
  await run({ id: 'a', data: event({ request_id: 'a', user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota: 700 }) }, s.deps)
  const keys = await s.redis.keys(`${s.env.REDIS_KEY_PREFIX}*`)
  await s.redis.del(...keys.map((k) => k.slice(s.env.REDIS_KEY_PREFIX!.length)))
  const pg = await s.db.selectFrom('users').select('quota').where('id', '=', s.user.id).executeTakeFirstOrThrow()
  const r = await s.quota.reserve({ requestId: 'b', userId: s.user.id, tokenId: s.token.id, unlimited: false, amount: 10, ttlSeconds: 60,
    loadUser: async () => (await s.db.selectFrom('users').select('quota').where('id', '=', s.user.id).executeTakeFirstOrThrow()).quota,
    loadToken: async () => (await s.db.selectFrom('tokens').select('remain_quota').where('id', '=', s.token.id).executeTakeFirstOrThrow()).remain_quota })
  t.match(r, { ok: true, userBalance: pg.quota - 10 }, 'the balance was rebuilt from Postgres; no money lost')
})

t.test('crossing the low-balance threshold mails the user, at most once per two hours', async (t) => {
  const { startTestSmtpServer } = await import('@modelgate/mail/testing')
  const { sendMail, smtpSettingsFrom } = await import('@modelgate/mail')
  const smtp = await startTestSmtpServer()
  t.teardown(() => smtp.close())
  const s = await setup(t)
  await s.db.updateTable('users').set({ email: 'payer@example.com', quota: 10_000 }).where('id', '=', s.user.id).execute()
  const options = new OptionValues(new Map([
    ['QuotaRemindThreshold', '5000'], ['SMTPServer', smtp.host], ['SMTPPort', String(smtp.port)], ['SMTPFrom', 'noreply@modelgate.test'], ['LogConsumeEnabled', 'true']
  ]))
  const sent: string[] = []
  const deps = {
    ...s.deps,
    options: async () => options,
    remind: async (to: { email: string, username: string, quota: number }, o: OptionValues) => {
      sent.push(to.email)
      await sendMail(smtpSettingsFrom(o), { to: to.email, subject: 'low balance', text: `balance ${to.quota}`, html: `<p>balance ${to.quota}</p>` })
    }
  }
  const spend = async (quota: number) => await run({ id: 'x', data: event({ user_id: s.user.id, token_id: s.token.id, channel_id: s.channel.id, quota }) }, deps)
  await spend(4000)
  t.same(sent, [], 'still above the threshold')
  await spend(2000)
  t.same(sent, ['payer@example.com'], 'crossing it sends one mail')
  t.match(smtp.lastTo('payer@example.com')?.text, /balance 4000/)
  await s.redis.del(`remind:quota:${s.user.id}`)
  await spend(1000)
  t.same(sent, ['payer@example.com'], 'spending further below the threshold sends nothing more')
  await s.db.updateTable('users').set({ quota: 6000 }).where('id', '=', s.user.id).execute()
  await spend(2000)
  t.same(sent, ['payer@example.com', 'payer@example.com'], 'a new crossing after the cool-down mails again')
  await s.db.updateTable('users').set({ quota: 6000 }).where('id', '=', s.user.id).execute()
  await spend(2000)
  t.equal(sent.length, 2, 'but not twice within two hours')
})
