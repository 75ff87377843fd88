import { randomUUID } from 'node:crypto'
import { LOG_TYPE, USAGE_BATCH_JOB, type UsageEvent } from '@modelgate/contracts'
import { type SettlementInput, settleUsage, settleUsageBatch, sql } from '@modelgate/db'
import { until } from '@modelgate/testing'
import t, { type Test } from 'tap'
import { SettlementBatcher } from '../src/jobs/settle-usage/batcher.js'
import { run } from '../src/jobs/settle-usage/handler.js'
import { runningWorker, settleSetup } from './fixtures.js'

/*
 * Refused requests (ErrorLogEnabled): the gateway sends an event with outcome `refused`, quota 0
 * and nothing reserved; settlement writes its error log row once and nothing else.
 */

async function setup (t: Test) {
  const s = await settleSetup(t, 'refused')
  // Consume logs off: a refused request's error row does not depend on them.
  s.setLogs(false)
  return s
}

type Setup = Awaited<ReturnType<typeof setup>>

/** A refused request's event, as the gateway's refusalEvent builds it. */
function refused (s: Setup, over: Partial<UsageEvent> = {}): UsageEvent {
  return {
    request_id: randomUUID(), created_at: Math.floor(Date.now() / 1000), user_id: s.user.id, username: s.user.username, token_id: s.token.id, token_name: 'tok',
    unlimited_token: false, channel_id: 0, model_name: 'no-price-model', upstream_model: 'no-price-model', group: 'default', is_stream: true, ip: '203.0.113.9',
    use_time_ms: 2400, first_response_ms: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reserved: 0, quota: 0, outcome: 'refused',
    usage_source: 'none', price: {}, retried_channels: [],
    error: { status: 403, message: 'Model no-price-model has no price set; ask the administrator to set its ratio or price' },
    ...over
  }
}

function served (s: Setup, quota: number): UsageEvent {
  const { error: _none, ...rest } = refused(s)
  return {
    ...rest, channel_id: s.channel.id, model_name: 'gpt-4o-mini', upstream_model: 'gpt-4o-mini', first_response_ms: 300, prompt_tokens: 10, completion_tokens: 5,
    reserved: 0, quota, outcome: 'success', usage_source: 'upstream', price: { model_ratio: 1, completion_ratio: 1, group_ratio: 1, model_price: -1 }
  }
}

/** Everything settlement could change besides the logs, to compare before and after. */
async function ledger (s: Setup) {
  return {
    user: await s.db.selectFrom('users').selectAll().where('id', '=', s.user.id).executeTakeFirstOrThrow(),
    token: await s.db.selectFrom('tokens').selectAll().where('id', '=', s.token.id).executeTakeFirstOrThrow(),
    channel: await s.db.selectFrom('channels').selectAll().where('id', '=', s.channel.id).executeTakeFirstOrThrow(),
    buckets: await s.db.selectFrom('quota_data').selectAll().execute(),
    redisUser: await s.quota.balance('user', s.user.id),
    redisToken: await s.quota.balance('token', s.token.id, s.token.user_id)
  }
}

const logsOf = async (s: Setup, requestId: string) => await s.db.selectFrom('logs').selectAll().where('request_id', '=', requestId).execute()

t.test('a refused event writes one error log row, with consume logs off, and changes nothing else however often it comes', async (t) => {
  const s = await setup(t)
  await s.quota.setBalance('user', s.user.id, 1_000_000)
  await s.quota.setBalance('token', s.token.id, 500_000, s.token.user_id)
  const before = await ledger(s)
  const e = refused(s)

  t.same(await run({ id: 'r1', data: e }, s.deps), { settled: true, delta: undefined }, 'settled, with no Redis correction (nothing was reserved)')
  t.same(await run({ id: 'r1', data: e }, s.deps), { settled: false, delta: undefined }, 'a redelivery changes nothing')
  // The worker's own path: a gateway batch through the batcher, delivered twice.
  const batcher = new SettlementBatcher(s.db, { max: 50, waitMs: 5 })
  const deps = { ...s.deps, settle: async (ev: SettlementInput, writeLog: boolean) => await batcher.settle(ev, writeLog) }
  const again = refused(s, { is_stream: false, model_name: 'other-model' })
  t.same(await run({ id: 'b1', data: { events: [again, e] } }, deps), { settled: 1, events: 2 }, 'in a batch: the new one settles, the old one is skipped')
  t.same(await run({ id: 'b1', data: { events: [again, e] } }, deps), { settled: 0, events: 2 }, 'a redelivered batch settles nothing')

  const rows = await logsOf(s, e.request_id)
  t.equal(rows.length, 1, 'exactly one log row for the request')
  t.match(rows[0], {
    type: LOG_TYPE.error, quota: 0, content: e.error!.message, model_name: 'no-price-model', user_id: s.user.id, username: 'refused',
    token_id: s.token.id, token_name: 'tok', group: 'default', ip: '203.0.113.9', request_id: e.request_id, is_stream: true, use_time: 2,
    channel_id: 0, prompt_tokens: 0, completion_tokens: 0, created_at: e.created_at
  })
  t.match(rows[0]!.other, { outcome: 'refused', usage_source: 'none', admin_info: { use_channel: [] } })
  t.match(await logsOf(s, again.request_id), [{ type: LOG_TYPE.error, quota: 0, model_name: 'other-model', is_stream: false }], 'the batch\'s row too')
  t.equal((await s.db.selectFrom('logs').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n, 2, 'nothing else logged')
  t.same(await ledger(s), before, 'user, token (accessed time too), channel, dashboard buckets and Redis balances unchanged')
  t.same(await s.db.selectFrom('settlements').select(['request_id', 'quota']).orderBy('request_id').execute(),
    [e, again].map((x) => ({ request_id: x.request_id, quota: 0 })).sort((a, b) => (a.request_id < b.request_id ? -1 : 1)), 'each has its idempotency record, at quota 0')
})

t.test('settling the same refused event twice writes one row, alone or beside billed events', async (t) => {
  const s = await setup(t)
  const e = refused(s)
  // One transaction per event (the fallback when a batch fails).
  t.ok(await settleUsage(s.db, e, { writeLog: false }), 'settled: the payer is reported')
  t.equal(await settleUsage(s.db, e, { writeLog: true }), undefined, 'the second time: already settled')
  t.equal((await logsOf(s, e.request_id)).length, 1)

  // Batches: a refused event beside a billed one of the same user, and the same events again.
  const r = refused(s)
  const bill = served(s, 700)
  // A refused event never charges, whatever its quota field says.
  const odd = refused(s, { quota: 5000 })
  const first = await settleUsageBatch(s.db, [r, bill, odd, r], { writeLog: true })
  t.match(first.get(r.request_id), { quota: 1_000_000 - 700 }, 'the refused event reports the payer as it is after the batch')
  t.match(first.get(bill.request_id), { quota: 1_000_000 - 700 })
  t.ok(first.get(odd.request_id) !== undefined)
  const second = await settleUsageBatch(s.db, [r, bill, odd], { writeLog: true })
  t.ok([...second.values()].every((v) => v === undefined), 'a redelivered batch settles nothing')
  t.equal((await logsOf(s, r.request_id)).length, 1, 'one row for the refused request, though it came three times')
  t.match(await logsOf(s, odd.request_id), [{ type: LOG_TYPE.error, quota: 0 }], 'logged at quota 0')
  t.match(await logsOf(s, bill.request_id), [{ type: LOG_TYPE.consume, quota: 700 }])
  t.match(await s.db.selectFrom('users').select(['quota', 'used_quota', 'request_count']).where('id', '=', s.user.id).executeTakeFirstOrThrow(),
    { quota: 1_000_000 - 700, used_quota: 700, request_count: 1 }, 'only the billed event counts')
  t.match(await s.db.selectFrom('tokens').select(['remain_quota', 'used_quota']).where('id', '=', s.token.id).executeTakeFirstOrThrow(), { remain_quota: 500_000 - 700, used_quota: 700 })
  t.match(await s.db.selectFrom('quota_data').select(['model_name', 'count', 'quota']).execute(), [{ model_name: 'gpt-4o-mini', count: 1, quota: 700 }], 'no dashboard bucket for refusals')

  // A batch of refusals only, with consume logs off.
  const only = [refused(s), refused(s)]
  const third = await settleUsageBatch(s.db, only, { writeLog: false })
  t.ok(only.every((x) => third.get(x.request_id) !== undefined), 'each reports its payer')
  t.equal((await s.db.selectFrom('logs').select(sql<number>`count(*)::int`.as('n')).where('type', '=', LOG_TYPE.error).executeTakeFirstOrThrow()).n, 5, 'their rows are written')
  t.equal((await s.db.selectFrom('users').select('request_count').where('id', '=', s.user.id).executeTakeFirstOrThrow()).request_count, 1)
})

t.test('the running worker settles a refused event from the usage queue once', async (t) => {
  const s = await setup(t)
  const queue = await runningWorker(t, s.env)
  const before = await ledger(s)
  const e = refused(s)
  const bill = served(s, 300)
  // The same refused event in two jobs (a gateway's retried publish), then a billed one after it.
  await queue.add(USAGE_BATCH_JOB, { events: [e] }, { jobId: `${e.request_id}+1` })
  await queue.add(USAGE_BATCH_JOB, { events: [e, bill] }, { jobId: `${e.request_id}+2` })
  t.ok(await until(async () => (await logsOf(s, bill.request_id)).length === 1, 30_000), 'the later billed event is settled')
  t.ok(await until(async () => (await queue.getJobCounts('completed')).completed === 2, 30_000), 'both jobs completed')
  t.match(await logsOf(s, e.request_id), [{ type: LOG_TYPE.error, quota: 0, content: e.error!.message }], 'one error row for the refused request')
  const after = await ledger(s)
  t.same({ quota: after.user.quota, requests: after.user.request_count, remain: after.token.remain_quota },
    { quota: before.user.quota - 300, requests: 1, remain: before.token.remain_quota - 300 }, 'only the billed event moved the balances')
  t.equal((await queue.getJobCounts('failed')).failed, 0, 'nothing failed')
})
