import { ROLES } from '@modelgate/contracts'
import t from 'tap'
import { build, login, ROOT, userSession } from './helpers.js'

t.test('drawing and music task lists: admins filter everyone\'s, users see their own without admin columns', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const alice = await userSession(app, 'alice')
  const bob = await userSession(app, 'bob')
  const admin = await userSession(app, 'adm', ROLES.admin)
  const now = Math.floor(Date.now() / 1000)
  await app.db.insertInto('midjourneys').values([
    { user_id: alice.user.id, mj_id: 'mj-1', action: 'IMAGINE', status: 'SUCCESS', code: 1, channel_id: 7, submit_time: now - 100, prompt: 'a cat', buttons: null, properties: null },
    { user_id: alice.user.id, mj_id: 'mj-2', action: 'UPSCALE', status: 'IN_PROGRESS', code: 21, channel_id: 8, submit_time: now - 10, buttons: null, properties: null },
    { user_id: bob.user.id, mj_id: 'mj-3', action: 'IMAGINE', status: 'FAILURE', code: 1, channel_id: 7, submit_time: now - 40 * 86_400, buttons: null, properties: null }
  ]).execute()
  await app.db.insertInto('tasks').values([
    { user_id: alice.user.id, task_id: 'suno-1', platform: 'suno', action: 'MUSIC', status: 'SUCCESS', channel_id: 9, submit_time: now - 50, properties: null, data: null },
    { user_id: bob.user.id, task_id: 'suno-2', platform: 'suno', action: 'LYRICS', status: 'QUEUED', channel_id: 10, submit_time: now - 5, properties: null, data: null }
  ]).execute()
  const get = async (session: { headers: Record<string, string> }, url: string) => (await app.inject({ url, headers: session.headers })).json()

  const all = await get(root, '/api/mj/?p=1&page_size=10')
  t.same(all.data.items.map((i: { mj_id: string }) => i.mj_id), ['mj-2', 'mj-1', 'mj-3'], 'newest first, everyone\'s')
  t.equal(all.data.total, 3)
  t.match(all.data.items[0], { channel_id: 8, code: 21 }, 'admins see the channel and the submit result')
  t.same((await get(admin, '/api/mj/?channel_id=7')).data.items.map((i: { mj_id: string }) => i.mj_id), ['mj-1', 'mj-3'])
  t.same((await get(root, `/api/mj/?start_timestamp=${now - 30 * 86_400}&end_timestamp=${now}`)).data.total, 2, 'the default 30-day window leaves old tasks out')
  t.same((await get(root, '/api/mj/?mj_id=mj-3')).data.items.length, 1)

  const own = await get(alice, '/api/mj/self/?p=1')
  t.same(own.data.items.map((i: { mj_id: string }) => i.mj_id), ['mj-2', 'mj-1'], 'a user sees only their own tasks')
  t.notOk('channel_id' in own.data.items[0] || 'code' in own.data.items[0], 'without the admin-only columns')
  t.equal((await get(bob, '/api/mj/self?mj_id=mj-1')).data.total, 0, 'another user\'s task id finds nothing')
  t.equal((await app.inject({ url: '/api/mj/', headers: alice.headers })).statusCode, 403, 'the full list is for admins')

  t.same((await get(root, '/api/task/')).data.items.map((i: { task_id: string }) => i.task_id), ['suno-2', 'suno-1'])
  t.same((await get(root, '/api/task/?channel_id=9&task_id=suno-1')).data.total, 1)
  const tasks = await get(bob, '/api/task/self')
  t.same(tasks.data.items.map((i: { task_id: string }) => i.task_id), ['suno-2'])
  t.notOk('channel_id' in tasks.data.items[0])
  t.equal((await app.inject({ url: '/api/task/self?start_timestamp=abc', headers: bob.headers })).statusCode, 400, 'bad filters are refused')
})
