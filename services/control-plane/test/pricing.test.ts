import { CHANNEL_STATUS, type ChannelStatus } from '@modelgate/contracts'
import t from 'tap'
import { build, userSession } from './helpers.js'

t.test('GET /api/pricing lists what enabled channels sell, at the configured prices', async (t) => {
  const app = await build(t)
  await app.saveOptions({
    ModelRatio: JSON.stringify({ 'gpt-4o': 1.25, 'cheap-model': 0.1 }),
    CompletionRatio: JSON.stringify({ 'gpt-4o': 4 }),
    ModelPrice: JSON.stringify({ 'dall-e-3': 0.04 }),
    GroupRatio: JSON.stringify({ default: 1, vip: 0.5, svip: 0.25 }),
    UserUsableGroups: JSON.stringify({ default: 'Default', vip: 'VIP' })
  })
  const channel = async (status: ChannelStatus, rows: Array<[string, string]>) => {
    const { id } = await app.db.insertInto('channels').values({ key: 'sk-upstream', status, name: `c${status}` }).returning('id').executeTakeFirstOrThrow()
    await app.db.insertInto('abilities').values(rows.map(([group, model]) => ({ group, model, channel_id: id, enabled: status === CHANNEL_STATUS.enabled }))).execute()
  }
  await channel(1, [['default', 'gpt-4o'], ['vip', 'gpt-4o'], ['default', 'dall-e-3'], ['vip', 'unpriced-model']])
  await channel(1, [['svip', 'gpt-4o']])
  // A disabled channel's models are not for sale.
  await channel(2, [['default', 'cheap-model']])

  const res = await app.inject('/api/pricing')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.success, true)
  t.same(body.data, [
    { model_name: 'dall-e-3', quota_type: 1, model_ratio: 0, completion_ratio: 0, model_price: 0.04, enable_groups: ['default'] },
    { model_name: 'gpt-4o', quota_type: 0, model_ratio: 1.25, completion_ratio: 4, model_price: -1, enable_groups: ['default', 'svip', 'vip'] }
  ], 'per-call and per-token items; unpriced and disabled models left out')
  t.same(body.group_ratio, { default: 1, vip: 0.5, svip: 0.25 })
  t.same(body.usable_group, { default: 'Default', vip: 'VIP' }, 'anonymous callers see the configured usable groups')

  // A signed-in user in a private group also sees that group.
  const vip = await userSession(app, 'insider')
  await app.db.updateTable('users').set({ group: 'svip' }).where('id', '=', vip.user.id).execute()
  const own = (await app.inject({ url: '/api/pricing', headers: vip.headers })).json()
  t.same(own.usable_group, { default: 'Default', vip: 'VIP', svip: 'svip' })

  // Price changes show at once (options are re-read after the change is announced).
  await app.saveOptions({ ModelRatio: JSON.stringify({ 'gpt-4o': 2.5 }) })
  const after = (await app.inject('/api/pricing')).json()
  t.equal(after.data.find((i: { model_name: string }) => i.model_name === 'gpt-4o').model_ratio, 2.5)
})
