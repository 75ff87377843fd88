import t from 'tap'
import { apiSession } from '../src/api.js'
import { startSystem } from '../src/system.js'
import { fakeOpenAI } from '../src/upstream.js'

/** Polls `probe` until it returns `want` or a second passes; returns how long it took (ms) or -1. */
async function within (probe: () => Promise<number>, want: number, limitMs = 1000): Promise<number> {
  const started = Date.now()
  while (Date.now() - started <= limitMs) {
    if (await probe() === want) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return -1
}

t.test('console changes reach a running gateway within a second, over real HTTP', async (t) => {
  // The periodic reload is a minute away: only the change announcements can explain a fast pickup.
  const system = await startSystem(t, { STATE_REFRESH_MS: '60000' })
  const upstream = await fakeOpenAI(t)
  const root = await apiSession(t, system.url, 'root', '123456')
  const created = await root.send('POST', '/api/user/', { username: 'alice', password: 'password123' })
  t.equal(created.success, true, created.message)
  const alice = await apiSession(t, system.url, 'alice', 'password123')
  await root.send('PUT', '/api/user/', { id: alice.id, quota: 5_000_000 })
  const token = await alice.send<{ id: number, full_key: string }>('POST', '/api/token/', { name: 'laptop', remain_quota: 1_000_000 })
  t.equal(token.success, true, token.message)
  const key = token.data.full_key
  const chat = async () => (await fetch(`${system.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
  })).status
  t.equal(await chat(), 404, 'no channel lists the model yet: 404 model_not_found')

  const channel = await root.send<Array<{ id: number }>>('POST', '/api/channel/', { name: 'main', type: 1, key: 'sk-upstream', base_url: upstream.url, models: 'gpt-4o-mini', group: 'default' })
  t.equal(channel.success, true, channel.message)
  const id = channel.data[0]!.id
  let ms = await within(chat, 200)
  t.ok(ms >= 0, `a new channel serves within a second (${ms} ms)`)

  await root.send('PUT', '/api/channel/', { id, status: 2 })
  ms = await within(chat, 503)
  t.ok(ms >= 0, `a disabled channel stops serving within a second (${ms} ms)`)
  await root.send('PUT', '/api/channel/', { id, status: 1 })
  t.ok(await within(chat, 200) >= 0, 'and serves again once enabled')

  await alice.send('PUT', '/api/token/?status_only=true', { id: token.data.id, status: 2 })
  ms = await within(chat, 401)
  t.ok(ms >= 0, `a disabled token is refused within a second (${ms} ms)`)
  await alice.send('PUT', '/api/token/?status_only=true', { id: token.data.id, status: 1 })
  t.ok(await within(chat, 200) >= 0, 'and accepted again once enabled')

  await root.send('PUT', '/api/channel/', { id, models: 'gpt-4o' })
  t.ok(await within(chat, 404) >= 0, 'a model removed from the channel stops routing within a second (404: no channel lists it)')

  // Another user cannot see alice's token at all.
  await root.send('POST', '/api/user/', { username: 'bob', password: 'password123' })
  const bob = await apiSession(t, system.url, 'bob', 'password123')
  t.same((await bob.send<{ total: number }>('GET', '/api/token/')).data.total, 0)
  t.equal((await bob.send('GET', `/api/token/${token.data.id}`)).success, false, 'bob gets not found for alice\'s token')
  t.equal((await bob.send('POST', `/api/token/${token.data.id}/key`)).success, false)
})
