import type { NewLog } from '@modelgate/db'
import t from 'tap'
import { build, login, ROOT, userSession } from './helpers.js'

interface Page { items: Array<{ id?: number, mj_id?: string, task_id?: string }>, page: number, page_size: number, total: number }

t.test('every list pages as new-api clients ask: p below 1 is page 1, size from page_size, ps or size, clamped to 1..100', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const alice = await userSession(app, 'alice')
  const now = Math.floor(Date.now() / 1000)
  const call = async (headers: Record<string, string>, method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await app.inject({ method, url, headers: { ...headers, 'accept-language': 'en' }, ...(payload === undefined ? {} : { payload }) })
    return { status: res.statusCode, body: res.json() }
  }

  // Three or more rows in each list.
  for (const name of ['one', 'two', 'three']) {
    t.equal((await call(alice.headers, 'POST', '/api/token/', { name: `key-${name}` })).body.success, true, `token ${name} created`)
  }
  await userSession(app, 'bob')
  await userSession(app, 'carol')
  t.equal((await call(root.headers, 'POST', '/api/redemption/', { name: 'promo', quota: 1000, count: 3 })).body.success, true, 'codes created')
  t.equal((await call(root.headers, 'POST', '/api/channel/', { name: 'pool', type: 1, key: 'sk-a\nsk-b\nsk-c', models: 'gpt-4o', mode: 'batch' })).body.success, true, 'channels created')
  const log = (created_at: number): Omit<NewLog, 'id'> & { created_at: number } =>
    ({ created_at, type: 2, user_id: alice.user.id, username: 'alice', token_name: 'key-one', model_name: 'gpt-4o', channel_id: 1, quota: 10, prompt_tokens: 1, completion_tokens: 1 })
  await app.db.insertInto('logs').values([log(now - 30), log(now - 20), log(now - 10)]).execute()
  await app.db.insertInto('midjourneys').values([1, 2, 3].map((i) => ({ user_id: alice.user.id, mj_id: `mj-${i}`, action: 'IMAGINE', status: 'SUCCESS', code: 1, channel_id: 1, submit_time: now - i, buttons: null, properties: null }))).execute()
  await app.db.insertInto('tasks').values([1, 2, 3].map((i) => ({ user_id: alice.user.id, task_id: `suno-${i}`, platform: 'suno', action: 'MUSIC', status: 'SUCCESS', channel_id: 1, submit_time: now - i, properties: null, data: null }))).execute()

  const lists: Array<[string, Record<string, string>]> = [
    ['/api/token/', alice.headers],
    ['/api/token/search?keyword=key', alice.headers],
    ['/api/user/', root.headers],
    ['/api/user/search?keyword=', root.headers],
    ['/api/redemption/', root.headers],
    ['/api/redemption/search?keyword=promo', root.headers],
    ['/api/channel/', root.headers],
    ['/api/channel/search?keyword=pool', root.headers],
    ['/api/log/', root.headers],
    ['/api/log/self', alice.headers],
    ['/api/log/self/', alice.headers],
    ['/api/mj/', root.headers],
    ['/api/mj/self', alice.headers],
    ['/api/task/', root.headers],
    ['/api/task/self', alice.headers]
  ]
  const rowKey = (i: Page['items'][number]) => String(i.id ?? i.mj_id ?? i.task_id)

  for (const [list, headers] of lists) {
    await t.test(list, async (t) => {
      const url = (query: string) => `${list}${list.includes('?') ? '&' : '?'}${query}`
      const get = async (query: string): Promise<Page> => {
        const res = await call(headers, 'GET', url(query))
        t.equal(res.status, 200, `${query} is accepted`)
        t.equal(res.body.success, true, `${query} succeeds`)
        return res.body.data
      }
      const all = await get('p=1&page_size=100')
      const order = all.items.map(rowKey)
      t.ok(order.length >= 3, `the list has ${order.length} rows`)
      t.equal(all.total, order.length)
      const expect = async (query: string, page: number, pageSize: number, what: string) => {
        const got = await get(query)
        t.same({ page: got.page, page_size: got.page_size, total: got.total }, { page, page_size: pageSize, total: order.length }, `${what}: reported page and size`)
        t.same(got.items.map(rowKey), order.slice((page - 1) * pageSize, page * pageSize), `${what}: rows`)
      }
      await expect('p=0&page_size=2', 1, 2, 'p=0 is the first page')
      await expect('p=-1&page_size=2', 1, 2, 'a negative p is the first page')
      await expect('p=1&page_size=2', 1, 2, 'p=1')
      await expect('p=2&page_size=2', 2, 2, 'p=2')
      await expect('p=0&ps=2', 1, 2, 'ps sets the size')
      await expect('p=2&size=2', 2, 2, 'size sets the size')
      await expect('page_size=1&ps=2&size=3', 1, 1, 'page_size comes before ps and size')
      await expect('ps=2&size=1', 1, 2, 'ps comes before size')
      await expect('p=0&page_size=1000', 1, 100, 'a size above 100 is clamped to 100')
      await expect('page_size=0', 1, 1, 'a size below 1 is clamped to 1')
      await expect('', 1, 20, 'no paging: page 1 of 20')
      await expect('p=abc&page_size=xyz', 1, 20, 'text that is no number counts as unsent')
      await expect('p=99999999999999999999&page_size=2', 10_000_000, 2, 'a huge page is past the end, not an error')
    })
  }

  await t.test('/api/usage/failed', async (t) => {
    const res = await call(root.headers, 'GET', '/api/usage/failed?p=0&ps=1000')
    t.equal(res.status, 200)
    t.match(res.body.data, { page: 1, page_size: 100 })
  })
})
