import { LOG_TYPE, type UsageEvent } from '@modelgate/contracts'
import { settleUsageBatch, sql } from '@modelgate/db'
import { QuotaStore } from '@modelgate/quota'
import t, { type Test } from 'tap'
import { buildGateway, fakeOpenAI, reload, seedChannel, seedToken, seedUser, setOptions, usageEvents } from './fixtures.js'

/*
 * ErrorLogEnabled (new-api's "record error logs"): a relay request refused once its caller is
 * known is queued as one `refused` usage event (quota 0, nothing reserved) for the billing worker
 * to log; with the option off (the default), or before the caller is known, nothing is.
 */

interface Answer { status: number, message: string, code: string | null }

async function chat (url: string, key: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body)
  })
  const text = await res.text()
  if (res.status === 200) return { status: 200, message: '', code: null }
  const error = (JSON.parse(text) as { error: { message: string, code: string | null } }).error
  return { status: res.status, message: error.message, code: error.code }
}

const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hello there' }], ...extra })

/** A gateway whose one channel lists gpt-4o-mini (priced) and house-model (no price). */
async function setup (t: Test, errorLog: boolean) {
  const { app, url } = await buildGateway(t)
  const upstream = await fakeOpenAI(t)
  await seedChannel(app.db, { baseUrl: upstream.url, models: ['gpt-4o-mini', 'gpt-4o', 'house-model'] })
  if (errorLog) await setOptions(app.db, { ErrorLogEnabled: 'true' })
  await reload(app)
  return { app, url, upstream }
}

const refusedOf = (events: UsageEvent[]) => events.filter((e) => e.outcome === 'refused')

t.test('off by default: a refused request queues nothing', async (t) => {
  const { app, url, upstream } = await setup(t, false)
  t.equal(app.relayState.options.bool('ErrorLogEnabled'), false, 'the option defaults to off')
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  const res = await chat(url, key, ask('house-model'))
  t.match(res, { status: 403, code: 'model_not_priced', message: 'Model house-model has no price set; ask the administrator to set its ratio or price' })
  t.same(await usageEvents(app), [], 'no usage event')
  t.equal(upstream.requests.length, 0)
})

t.test('on: each refusal after the caller is known queues one refused event, nothing reserved; unknown callers queue nothing', async (t) => {
  const { app, url, upstream } = await setup(t, true)
  const quota = new QuotaStore(app.redis)
  const user = await seedUser(app.db, { username: 'alice' })
  const { key, row: token } = await seedToken(app.db, user.id, { name: 'alice-key' })
  const limited = await seedToken(app.db, user.id, { name: 'limited', modelLimits: 'gpt-4o-mini' })
  const foreign = await seedToken(app.db, user.id, { name: 'foreign', group: 'secret-group' })
  const paced = await seedToken(app.db, user.id, { name: 'paced', rpm: 1 })
  const poor = await seedUser(app.db, { username: 'poor', quota: 1 })
  const poorKey = await seedToken(app.db, poor.id, { name: 'poor-key' })

  // What each client is told, and the refusal its event must carry.
  const refusals: Array<{ what: string, answer: Answer, model: string, token: { id: number, name: string }, user: { id: number, username: string }, stream: boolean }> = []
  const refuse = async (what: string, k: string, body: Record<string, unknown>, who: { token: { id: number, name: string }, user: { id: number, username: string } }, headers: Record<string, string> = {}) => {
    const answer = await chat(url, k, body, headers)
    refusals.push({ what, answer, model: typeof body['model'] === 'string' ? body['model'] : '', stream: body['stream'] === true, ...who })
    return answer
  }
  const alice = { token: { id: token.id, name: 'alice-key' }, user: { id: user.id, username: 'alice' } }

  t.match(await refuse('no price', key, ask('house-model', { stream: true }), alice), { status: 403, code: 'model_not_priced' })
  t.match(await refuse('unknown model', key, ask('no-such-model'), alice), { status: 404, code: 'model_not_found' })
  t.match(await refuse('no model', key, { messages: [{ role: 'user', content: 'hi' }] }, alice), { status: 400, code: 'missing_model' })
  t.match(await refuse('model limits', limited.key, ask('gpt-4o'), { ...alice, token: { id: limited.row.id, name: 'limited' } }), { status: 403, code: 'model_not_allowed' })
  t.match(await refuse('group', foreign.key, ask('gpt-4o-mini'), { ...alice, token: { id: foreign.row.id, name: 'foreign' } }), { status: 403, code: 'group_not_allowed' })
  t.match(await refuse('user quota', poorKey.key, ask('gpt-4o-mini'), { token: { id: poorKey.row.id, name: 'poor-key' }, user: { id: poor.id, username: 'poor' } }), { status: 403, code: 'insufficient_quota' })
  t.match(await chat(url, paced.key, ask('gpt-4o-mini')), { status: 200 }, 'the paced token\'s first request is served')
  t.match(await refuse('rpm', paced.key, ask('gpt-4o-mini'), { ...alice, token: { id: paced.row.id, name: 'paced' } }), { status: 429, code: 'rate_limit_exceeded' })
  // The client reads Chinese; the log keeps the English message.
  const zh = await chat(url, key, ask('house-model'), { 'accept-language': 'zh-CN' })
  t.match(zh, { status: 403, message: '模型 house-model 未设置倍率或价格，请联系管理员设置' })

  // Before the caller is known: never recorded.
  t.match(await chat(url, 'sk-notarealkey0000000000000000000000000000000000000', ask('house-model')), { status: 401 })
  t.match(await chat(url, undefined, ask('house-model')), { status: 401 })

  const events = await usageEvents(app)
  const refused = refusedOf(events)
  t.equal(refused.length, refusals.length + 1, 'one refused event per refusal of a known caller (the Chinese one included), none for unknown keys')
  t.same(events.filter((e) => e.outcome !== 'refused').map((e) => e.outcome), ['success'], 'the served request has its own event, as always')
  t.equal(new Set(refused.map((e) => e.request_id)).size, refused.length, 'each its own request id')
  for (const r of refusals) {
    const e = refused.find((x) => x.error?.message === r.answer.message && x.token_id === r.token.id && x.is_stream === r.stream)
    t.ok(e, `${r.what}: the event carries what the client was told (${r.answer.message})`)
    t.match(e, {
      outcome: 'refused', quota: 0, reserved: 0, channel_id: 0, usage_source: 'none', prompt_tokens: 0, completion_tokens: 0, retried_channels: [],
      model_name: r.model, user_id: r.user.id, username: r.user.username, token_name: r.token.name, is_stream: r.stream, ip: '127.0.0.1', group: r.what === 'group' ? 'secret-group' : 'default',
      error: { status: r.answer.status, message: r.answer.message }
    }, `${r.what}: the event names the caller, the model and the refusal`)
  }
  const chinese = refused.filter((e) => e.model_name === 'house-model' && !e.is_stream)
  t.match(chinese, [{ error: { status: 403, message: 'Model house-model has no price set; ask the administrator to set its ratio or price' } }], 'the log keeps the English message')
  t.equal(upstream.requests.length, 1, 'only the served request reached the upstream')
  t.equal(await quota.balance('user', poor.id), 1, 'the refused reservation holds nothing in Redis')

  // As the billing worker settles them: one error log row each, no balance or counter moved.
  const before = await app.db.selectFrom('users').select(['id', 'quota', 'used_quota', 'request_count']).where('id', '=', poor.id).executeTakeFirstOrThrow()
  await settleUsageBatch(app.db, events, { writeLog: true })
  await settleUsageBatch(app.db, refused, { writeLog: true })
  const logs = await app.db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.error).execute()
  t.equal(logs.length, refused.length, 'one error row per refused request, though settled twice')
  t.ok(logs.every((l) => l.quota === 0), 'each at quota 0')
  t.same(await app.db.selectFrom('users').select(['id', 'quota', 'used_quota', 'request_count']).where('id', '=', poor.id).executeTakeFirstOrThrow(), before, 'the refused-only user is untouched')
  t.equal((await app.db.selectFrom('quota_data').select(sql<number>`count(*)::int`.as('n')).where('user_id', '=', poor.id).executeTakeFirstOrThrow()).n, 0, 'no dashboard row for refusals')
})

t.test('a refusal never stands in for an admitted request\'s event: drain still waits for it', async (t) => {
  const { app, url, upstream } = await setup(t, true)
  const user = await seedUser(app.db)
  const { key } = await seedToken(app.db, user.id)
  upstream.behaviour.chunks = 10
  upstream.behaviour.chunkDelayMs = 300
  let slowDone = false
  const slow = chat(url, key, ask('gpt-4o-mini', { stream: true })).finally(() => { slowDone = true })
  const deadline = Date.now() + 30_000
  while (upstream.requests.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(upstream.requests.length, 1, 'the streamed request is admitted and upstream')
  for (let i = 0; i < 3; i++) t.match(await chat(url, key, ask('house-model')), { status: 403, code: 'model_not_priced' })
  t.notOk(slowDone, 'still streaming when the refusals are queued')
  const events = await usageEvents(app)
  t.same(events.map((e) => e.outcome).sort(), ['refused', 'refused', 'refused', 'success'], 'drain waited for the admitted request\'s event')
  t.match(await slow, { status: 200 })
})
