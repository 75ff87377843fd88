// Seeds through the real console API, as an operator would: users, quota, tokens, a channel.
import { setTimeout as sleep } from 'node:timers/promises'
import { ConsoleSession } from './console-api.js'
import { chatBody, MODEL, type Seeded } from './measure.js'
import type { Stack } from './stack.js'

/** Large enough that no scenario runs a balance dry (quota units; 500 000 per dollar). */
const QUOTA = 1_000_000_000_000
const PASSWORD = 'bench-password-2026'

interface CreatedToken { id: number, full_key?: string }

async function createUser (root: ConsoleSession, username: string): Promise<ConsoleSession> {
  const user = await root.call<{ id: number }>('POST', '/api/user/', { username, password: PASSWORD })
  await root.call('PUT', '/api/user/', { id: user.id, quota: QUOTA })
  return await ConsoleSession.login(root.base, username, PASSWORD)
}

async function createToken (session: ConsoleSession, name: string): Promise<{ id: number, key: string }> {
  const data = await session.call<CreatedToken | CreatedToken[]>('POST', '/api/token/', { name, unlimited_quota: true })
  const token = Array.isArray(data) ? data[0] : data
  if (token === undefined) throw new Error('POST /api/token/ answered no token')
  const key = token.full_key ?? (await session.call<{ key: string }>('POST', `/api/token/${token.id}/key`)).key
  return { id: token.id, key: key.startsWith('sk-') ? key : `sk-${key}` }
}

/** Channel fields the bench sends for a channel pointing at the mock upstream. */
export function mockChannel (stack: Stack, name: string, key: string, models: string[]): Record<string, unknown> {
  return { name, type: 1, key, base_url: stack.mockUrl, models: models.join(','), group: 'default' }
}

/** Creates channels through the API (one, or one per key line with `mode: 'batch'`); returns their ids. */
export async function createChannels (root: ConsoleSession, fields: Record<string, unknown>): Promise<number[]> {
  const created = await root.call<Array<{ id: number }>>('POST', '/api/channel/', fields)
  if (!Array.isArray(created) || created.length === 0) throw new Error('POST /api/channel/ answered no channel')
  return created.map((c) => c.id)
}

/** Sends relay requests for `model` until the gateway answers 200 (it reloads routing on change). */
export async function untilRouted (stack: Stack, key: string, model: string, timeoutMs: number, everyMs = 5): Promise<number> {
  const t0 = performance.now()
  let last = ''
  while (performance.now() - t0 < timeoutMs) {
    const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: chatBody({ model })
    })
    last = `${res.status} ${(await res.text()).slice(0, 300)}`
    if (res.status === 200) return performance.now() - t0
    await sleep(everyMs)
  }
  throw new Error(`the gateway did not route ${model} within ${timeoutMs} ms; last answer: ${last}`)
}

export async function seed (stack: Stack, log: (line: string) => void): Promise<Seeded> {
  const root = await ConsoleSession.login(stack.gatewayUrl, 'root', '123456')
  const relay = await createUser(root, 'bench')
  const billing = await createUser(root, 'benchbill')
  const relayToken = await createToken(relay, 'bench')
  const billingToken = await createToken(billing, 'benchbill')
  const [channelId] = await createChannels(root, mockChannel(stack, 'bench-mock', 'sk-mock', [MODEL]))
  await untilRouted(stack, relayToken.key, MODEL, 30_000, 50)
  log(`seeded through the API: users bench (id ${relay.userId}) and benchbill (id ${billing.userId}), their tokens, channel ${channelId}`)
  return { root, relay, relayKey: relayToken.key, relayTokenId: relayToken.id, billing, billingTokenId: billingToken.id, channelId: channelId! }
}
