import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type ChannelStatus, OptionValues } from '@modelgate/contracts'
import { SecretBox } from '@modelgate/service'
import { TEST_SECRETS } from '@modelgate/testing'
import { Redis } from 'ioredis'
import t from 'tap'
import { run } from '../src/jobs/channel-tests/handler.js'
import { workerEnv } from './fixtures.js'

t.test('periodic tests disable failing or slow channels and re-enable recovered ones, never manual ones', async (t) => {
  const { env, db, redis } = await workerEnv(t)
  // One real OpenAI-speaking upstream; the path prefix picks its behaviour per channel.
  const server = createServer((req, res) => {
    const mode = (req.url ?? '').split('/')[1]
    const answer = () => {
      if (mode === 'badkey') {
        res.writeHead(401, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }))
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }))
    }
    if (mode === 'slow') setTimeout(answer, 3000)
    else answer()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const box = new SecretBox(TEST_SECRETS.CRYPTO_SECRET)
  const channel = async (name: string, path: string, status: ChannelStatus, autoBan = 1) => await db.insertInto('channels').values({
    name, type: 8, key: box.seal('sk-up'), base_url: `${base}/${path}/v1/chat/completions`, models: 'gpt-4o-mini', status, auto_ban: autoBan,
    openai_organization: null, tag: null, other_info: {}
  }).returningAll().executeTakeFirstOrThrow()
  const healthy = await channel('healthy', 'ok', 1)
  const broken = await channel('broken', 'badkey', 1)
  const slow = await channel('slow', 'slow', 1)
  const recovered = await channel('recovered', 'ok', 3)
  const manual = await channel('manual', 'ok', 2)
  const noBan = await channel('noban', 'badkey', 1, 0)
  for (const c of [healthy, broken, slow, recovered, manual, noBan]) {
    await db.insertInto('abilities').values({ group: 'default', model: 'gpt-4o-mini', channel_id: c.id, enabled: c.status === 1, tag: null }).execute()
  }
  const sub = new Redis(env.REDIS_URL!)
  t.teardown(() => { sub.disconnect() })
  const announced: number[] = []
  await sub.subscribe(`${env.REDIS_KEY_PREFIX}config:changed`)
  sub.on('message', (_c: string, m: string) => announced.push((JSON.parse(m) as { id: number }).id))
  let opts = new Map([['AutomaticDisableChannelEnabled', 'false'], ['AutomaticEnableChannelEnabled', 'false']])
  const deps = { db, redis, keyPrefix: env.REDIS_KEY_PREFIX!, box, options: async () => new OptionValues(opts) }
  t.same(await run(deps), { tested: 0, disabled: 0, enabled: 0 }, 'nothing runs while both switches are off')
  opts = new Map([['AutomaticDisableChannelEnabled', 'true'], ['AutomaticEnableChannelEnabled', 'true'], ['ChannelDisableThreshold', '1.5']])
  t.same(await run(deps), { tested: 5, disabled: 2, enabled: 1 })
  const rows = new Map((await db.selectFrom('channels').select(['id', 'status', 'other_info', 'response_time', 'test_time']).execute()).map((r) => [r.id, r]))
  t.equal(rows.get(healthy.id)?.status, 1)
  t.ok(rows.get(healthy.id)!.test_time > 0, 'the test time is recorded')
  t.match(rows.get(broken.id), { status: 3, other_info: { status_reason: /Incorrect API key/ } })
  t.match(rows.get(slow.id), { status: 3, other_info: { status_reason: /exceeds 1500 ms/ } })
  t.ok(rows.get(slow.id)!.response_time >= 3000, 'the response time is recorded')
  t.equal(rows.get(recovered.id)?.status, 1, 'an auto-disabled channel that passes comes back')
  t.equal(rows.get(manual.id)?.status, 2, 'a manually disabled channel is never re-enabled, nor tested')
  t.equal(rows.get(noBan.id)?.status, 1, 'auto_ban off: a failing channel stays enabled')
  const abilities = await db.selectFrom('abilities').select(['channel_id', 'enabled']).orderBy('channel_id').execute()
  t.same(abilities.map((a) => a.enabled), [true, false, false, true, false, true], 'the routing index follows')
  const logs = await db.selectFrom('logs').select(['type', 'channel_id']).orderBy('channel_id').execute()
  t.same(logs.map((l) => l.channel_id), [broken.id, slow.id, recovered.id])
  await new Promise((r) => setTimeout(r, 100))
  t.same(announced.sort(), [broken.id, slow.id, recovered.id].sort(), 'gateways are told at once')
})
