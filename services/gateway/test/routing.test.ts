import { SecretBox } from '@modelgate/service'
import t from 'tap'
import { buildGateway, fakeOpenAI, reload, seedChannel } from './fixtures.js'

t.test('channel choice: highest tier first, weighted inside, zeros equal, stepping down on retry', async (t) => {
  const { app } = await buildGateway(t)
  const up = await fakeOpenAI(t)
  const heavy = await seedChannel(app.db, { baseUrl: up.url, models: ['m'], priority: 10, weight: 3 })
  const light = await seedChannel(app.db, { baseUrl: up.url, models: ['m'], priority: 10, weight: 1 })
  const low1 = await seedChannel(app.db, { baseUrl: up.url, models: ['m'], priority: 1, weight: 0 })
  const low2 = await seedChannel(app.db, { baseUrl: up.url, models: ['m'], priority: 1, weight: 0 })
  const disabled = await seedChannel(app.db, { baseUrl: up.url, models: ['m'], priority: 99 })
  await app.db.updateTable('channels').set({ status: 2 }).where('id', '=', disabled.id).execute()
  const vip = await seedChannel(app.db, { baseUrl: up.url, models: ['m'], priority: 50, groups: ['vip'] })
  const zeroA = await seedChannel(app.db, { baseUrl: up.url, models: ['m'], weight: 0, groups: ['zero'] })
  const zeroB = await seedChannel(app.db, { baseUrl: up.url, models: ['m'], weight: 0, groups: ['zero'] })
  await reload(app)
  const state = app.relayState
  let seed = 1
  const random = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647 }
  const counts = new Map<number, number>()
  for (let i = 0; i < 4000; i++) {
    const id = state.pick('default', 'm', new Set(), random)!.id
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  t.same([...counts.keys()].sort(), [heavy.id, light.id].sort(), 'only the top tier of enabled channels of the group')
  const share = counts.get(heavy.id)! / 4000
  t.ok(share > 0.7 && share < 0.8, `weight 3 against 1 gets about three quarters (${share})`)
  const next = state.pick('default', 'm', new Set([heavy.id, light.id]), random)!
  t.ok([low1.id, low2.id].includes(next.id), 'a retry steps down a tier')
  const lows = new Map<number, number>()
  for (let i = 0; i < 2000; i++) {
    const id = state.pick('default', 'm', new Set([heavy.id, light.id]), random)!.id
    lows.set(id, (lows.get(id) ?? 0) + 1)
  }
  const lowShare = lows.get(low1.id)! / 2000
  t.ok(lowShare > 0.4 && lowShare < 0.6, `weights of 0 count as equal (${lowShare})`)
  t.equal(state.pick('default', 'm', new Set([heavy.id, light.id, low1.id, low2.id])), undefined, 'none left')
  t.equal(state.pick('vip', 'm', new Set())!.id, vip.id, 'groups route separately')
  let firstA = 0
  for (let i = 0; i < 2000; i++) if (state.pick('zero', 'm', new Set(), random)!.id === zeroA.id) firstA++
  t.ok(firstA > 800 && firstA < 1200, `a first pick among weights of 0 is even too (${firstA} of 2000)`)
  t.ok([zeroA.id, zeroB.id].includes(state.pick('zero', 'm', new Set([zeroA.id]), random)!.id))
  t.same(state.modelsOf('default'), ['m'])
})

t.test('a channel whose key cannot be decrypted is skipped, not fatal', async (t) => {
  const { app } = await buildGateway(t)
  const up = await fakeOpenAI(t)
  const ch = await seedChannel(app.db, { baseUrl: up.url, models: ['m'] })
  await app.db.updateTable('channels').set({ key: new SecretBox('another-secret-another-secret-xx').seal('k') }).where('id', '=', ch.id).execute()
  await reload(app)
  t.equal(app.relayState.pick('default', 'm', new Set()), undefined)
})

t.test('the routing table follows the channels\' comma lists: trimmed, deduplicated, enabled channels only', async (t) => {
  const { app } = await buildGateway(t)
  const up = await fakeOpenAI(t)
  const a = await seedChannel(app.db, { baseUrl: up.url, models: ['m'] })
  const b = await seedChannel(app.db, { baseUrl: up.url, models: ['m'] })
  await app.db.updateTable('channels').set({ models: ' m , m,x,, ', group: 'default, vip ,default' }).where('id', '=', a.id).execute()
  await app.db.updateTable('channels').set({ status: 2, models: 'only-disabled' }).where('id', '=', b.id).execute()
  await reload(app)
  const state = app.relayState
  t.same(state.modelsOf('default'), ['m', 'x'])
  t.same(state.modelsOf('vip'), ['m', 'x'])
  t.equal(state.pick('vip', 'x', new Set())?.id, a.id)
  t.equal(state.pick('default', 'm', new Set([a.id])), undefined, 'a channel listing a model twice is one candidate')
  t.notOk(state.serves('default', 'only-disabled'), 'a disabled channel routes nothing')
  t.equal(state.channels.get(b.id)?.status, 2, 'but stays known, for an administrator\'s pinned request')
  t.notOk(state.serves('default', ''), 'empty entries are ignored')
})
