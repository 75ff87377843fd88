import { ROLES } from '@modelgate/contracts'
import t from 'tap'
import { build, login, ROOT, userSession } from './helpers.js'

t.test('every route refuses callers below its level', async (t) => {
  const app = await build(t)
  const normal = await userSession(app, 'normal')
  const admin = await userSession(app, 'admin1', ROLES.admin)
  t.ok(app.routeAccess.length >= 15, 'the route table is populated')
  const levels = new Set(app.routeAccess.map((r) => r.auth))
  t.ok(levels.has('admin') && levels.has('root') && levels.has('user') && levels.has('public'))
  for (const route of app.routeAccess) {
    const url = route.url.replace(/:(\w+)/g, '1')
    const call = async (headers: Record<string, string>) =>
      await app.inject({ method: route.method as 'GET', url, headers, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: {} }) })
    if (route.auth === 'public') continue
    const anonymous = await call({})
    t.equal(anonymous.statusCode, 401, `${route.method} ${route.url} refuses an anonymous caller`)
    if (route.auth === 'admin' || route.auth === 'root') {
      const res = await call(normal.headers)
      t.equal(res.statusCode, 403, `${route.method} ${route.url} refuses a normal user`)
      t.equal(res.json().success, false)
    }
    if (route.auth === 'root') {
      t.equal((await call(admin.headers)).statusCode, 403, `${route.method} ${route.url} refuses an admin`)
    }
  }
})

t.test('admins list, search, read, create and edit users below them only', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const peer = await userSession(app, 'peer', ROLES.admin)
  const u1 = await userSession(app, 'zoe')
  await userSession(app, 'zack')

  const listed = (await app.inject({ url: '/api/user/?p=1&page_size=10', headers: admin.headers })).json().data
  t.same(listed.items.map((u: { username: string }) => u.username).sort(), ['adm', 'zack', 'zoe'], 'an admin sees users below it and itself')
  t.equal(listed.total, 3)
  t.equal(listed.page, 1)
  t.notOk('password_hash' in listed.items[0])
  const rootList = (await app.inject({ url: '/api/user/?page_size=2&p=2', headers: root.headers })).json().data
  t.equal(rootList.total, 5)
  t.equal(rootList.items.length, 2, 'paged')
  const search = (await app.inject({ url: '/api/user/search?keyword=za', headers: admin.headers })).json().data
  t.same(search.items.map((u: { username: string }) => u.username), ['zack'])
  const byId = (await app.inject({ url: `/api/user/search?keyword=${u1.user.id}`, headers: admin.headers })).json().data
  t.ok(byId.items.some((u: { id: number }) => u.id === u1.user.id), 'search matches an id')

  t.equal((await app.inject({ url: `/api/user/${u1.user.id}`, headers: admin.headers })).json().data.username, 'zoe')
  t.equal((await app.inject({ url: `/api/user/${peer.user.id}`, headers: admin.headers })).statusCode, 403, 'not a peer')
  t.equal((await app.inject({ url: '/api/user/1', headers: admin.headers })).statusCode, 403, 'not root')

  const created = await app.inject({ method: 'POST', url: '/api/user/', headers: admin.headers, payload: { username: 'newbie', password: 'password123', display_name: 'New' }, query: {} })
  t.equal(created.json().success, true)
  const asAdmin = await app.inject({ method: 'POST', url: '/api/user/', headers: admin.headers, payload: { username: 'boss', password: 'password123', role: ROLES.admin } })
  t.equal(asAdmin.json().success, false, 'an admin cannot create an admin')
  const dup = await app.inject({ method: 'POST', url: '/api/user/', headers: { ...admin.headers, 'accept-language': 'en' }, payload: { username: 'newbie', password: 'password123' } })
  t.equal(dup.json().message, 'Username already exists')
  const long = await app.inject({ method: 'POST', url: '/api/user/', headers: admin.headers, payload: { username: 'abcdefghijklm', password: 'password123' } })
  t.equal(long.json().success, false, 'username at most 12')
  const shortPw = await app.inject({ method: 'POST', url: '/api/user/', headers: admin.headers, payload: { username: 'shorty', password: 'short' } })
  t.equal(shortPw.json().success, false, 'password at least 8')

  const edit = await app.inject({ method: 'PUT', url: '/api/user/', headers: admin.headers, payload: { id: u1.user.id, display_name: 'Zoe Z', quota: 1000, group: 'vip' } })
  t.match(edit.json().data, { display_name: 'Zoe Z', quota: 1000, group: 'vip' })
  const delta = await app.inject({ method: 'PUT', url: '/api/user/', headers: admin.headers, payload: { id: u1.user.id, quota_delta: -300 } })
  t.equal(delta.json().data.quota, 700, 'a negative extra quota subtracts')
  const overdraw = await app.inject({ method: 'PUT', url: '/api/user/', headers: admin.headers, payload: { id: u1.user.id, quota_delta: -701 } })
  t.equal(overdraw.json().success, false, 'the balance cannot go below zero')
  const stringQuota = await app.inject({ method: 'PUT', url: '/api/user/', headers: admin.headers, payload: { id: u1.user.id, quota: '5' } })
  t.equal(stringQuota.statusCode, 400, 'quota must be an integer, not text')
  const logs = await app.db.selectFrom('logs').select(['type', 'quota', 'content']).where('user_id', '=', u1.user.id).orderBy('id').execute()
  t.same(logs.map((l) => [l.type, l.quota]), [[3, 1000], [3, -300]], 'each quota change is logged as a manage entry')
  t.equal((await app.inject({ method: 'PUT', url: '/api/user/', headers: admin.headers, payload: { id: peer.user.id, display_name: 'x' } })).statusCode, 403)
  const pw = await app.inject({ method: 'PUT', url: '/api/user/', headers: admin.headers, payload: { id: u1.user.id, password: 'reset-by-admin' } })
  t.equal(pw.json().success, true)
  t.equal((await app.inject({ url: '/api/user/self', headers: u1.headers })).statusCode, 401, 'a password set by an admin ends the user\'s sessions')
  await login(app, 'zoe', 'reset-by-admin')
})

t.test('manage actions follow the role rules and return the new status and role', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const u = await userSession(app, 'plain')
  const manage = async (who: { headers: Record<string, string> }, id: number, action: string) =>
    await app.inject({ method: 'POST', url: '/api/user/manage', headers: { ...who.headers, 'accept-language': 'en' }, payload: { id, action } })

  t.equal((await manage(admin, u.user.id, 'promote')).statusCode, 403, 'an admin cannot promote to admin')
  t.same((await manage(root, u.user.id, 'promote')).json().data, { status: 1, role: 10, deleted: false })
  t.equal((await manage(root, u.user.id, 'promote')).json().message, 'This user is already an admin')
  t.equal((await manage(admin, u.user.id, 'disable')).statusCode, 403, 'an admin cannot disable a peer')
  t.same((await manage(root, u.user.id, 'demote')).json().data, { status: 1, role: 1, deleted: false })
  t.same((await manage(admin, u.user.id, 'disable')).json().data, { status: 2, role: 1, deleted: false })
  t.same((await manage(admin, u.user.id, 'enable')).json().data, { status: 1, role: 1, deleted: false })
  for (const action of ['disable', 'delete', 'demote']) {
    const res = await manage(root, 1, action)
    t.equal(res.json().success, false, `root cannot be ${action}d`)
    t.equal(res.json().message, 'The super admin cannot be disabled, deleted or demoted')
  }
  t.equal((await manage(admin, 1, 'disable')).json().success, false)
  t.same((await manage(admin, u.user.id, 'delete')).json().data, { status: 1, role: 1, deleted: true })
  t.equal((await app.inject({ url: `/api/user/${u.user.id}`, headers: admin.headers })).json().success, false, 'a deleted user is gone')
  const again = await app.inject({ method: 'POST', url: '/api/user/', headers: admin.headers, payload: { username: 'plain', password: 'password123' } })
  t.equal(again.json().success, true, 'a deregistered name can be used again')
  const bad = await app.inject({ method: 'POST', url: '/api/user/manage', headers: root.headers, payload: { id: u.user.id, action: 'explode' } })
  t.equal(bad.statusCode, 400)
})

t.test('self service: profile, deletion, invite code, affiliate transfer, models and groups', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const u = await userSession(app, 'selfie')
  const upd = await app.inject({ method: 'PUT', url: '/api/user/self', headers: u.headers, payload: { display_name: 'Selfie' } })
  t.equal(upd.json().data.display_name, 'Selfie')

  const code1 = (await app.inject({ url: '/api/user/aff', headers: u.headers })).json().data
  const code2 = (await app.inject({ url: '/api/user/aff', headers: u.headers })).json().data
  t.match(code1, /^[A-Za-z0-9]{8}$/)
  t.equal(code1, code2, 'the invite code is stable')

  await app.db.updateTable('users').set({ aff_quota: 1_200_000 }).where('id', '=', u.user.id).execute()
  const tooSmall = await app.inject({ method: 'POST', url: '/api/user/aff_transfer', headers: { ...u.headers, 'accept-language': 'en' }, payload: { quota: 499_999 } })
  t.equal(tooSmall.json().message, 'The transfer amount must be at least 500000')
  const results = await Promise.all(Array.from({ length: 5 }, async () =>
    (await app.inject({ method: 'POST', url: '/api/user/aff_transfer', headers: u.headers, payload: { quota: 500_000 } })).json().success))
  t.equal(results.filter(Boolean).length, 2, 'five concurrent transfers of 500000 from 1200000: exactly two succeed')
  const row = await app.db.selectFrom('users').select(['quota', 'aff_quota']).where('id', '=', u.user.id).executeTakeFirstOrThrow()
  t.same(row, { quota: 1_000_000, aff_quota: 200_000 }, 'nothing created or lost')

  const ch = await app.db.insertInto('channels').values({ key: 'k', openai_organization: null, tag: null, other_info: {} }).returning('id').executeTakeFirstOrThrow()
  await app.db.insertInto('abilities').values([
    { group: 'default', model: 'gpt-4o', channel_id: ch.id, tag: null },
    { group: 'default', model: 'claude-3', channel_id: ch.id, tag: null, enabled: false },
    { group: 'vip', model: 'o3', channel_id: ch.id, tag: null }
  ]).execute()
  t.same((await app.inject({ url: '/api/user/models', headers: u.headers })).json().data, ['gpt-4o'], 'enabled models of the user\'s group')
  const groups = (await app.inject({ url: '/api/user/self/groups', headers: u.headers })).json().data
  t.same(groups.default, { desc: 'default', ratio: 1 })
  t.ok('vip' in groups)
  t.same((await app.inject({ url: '/api/group/', headers: root.headers })).json().data, ['default', 'vip', 'svip'])

  t.equal((await app.inject({ method: 'DELETE', url: '/api/user/self', headers: root.headers })).json().success, false, 'root cannot delete itself')
  const del = await app.inject({ method: 'DELETE', url: '/api/user/self', headers: u.headers })
  t.equal(del.json().success, true)
  t.equal((await app.inject({ url: '/api/user/self', headers: u.headers })).statusCode, 401)
  const gone = await app.db.selectFrom('users').select('deleted_at').where('id', '=', u.user.id).executeTakeFirstOrThrow()
  t.ok(gone.deleted_at !== null, 'soft deleted')
})

t.test('quota changes made in the console reach the balance the gateways spend from', async (t) => {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const u = await userSession(app, 'spender')
  await app.quota.setBalance('user', u.user.id, 0)
  await app.inject({ method: 'PUT', url: '/api/user/', headers: root.headers, payload: { id: u.user.id, quota: 5000 } })
  t.equal(await app.quota.balance('user', u.user.id), 5000)
  await app.inject({ method: 'PUT', url: '/api/user/', headers: root.headers, payload: { id: u.user.id, quota_delta: -1000 } })
  t.equal(await app.quota.balance('user', u.user.id), 4000)
  await app.db.updateTable('users').set({ aff_quota: 600_000 }).where('id', '=', u.user.id).execute()
  await app.inject({ method: 'POST', url: '/api/user/aff_transfer', headers: u.headers, payload: { quota: 500_000 } })
  t.equal(await app.quota.balance('user', u.user.id), 504_000, 'an affiliate transfer too')
})

t.test('admins set a user\'s concurrency limit; a user cannot set their own', async (t) => {
  const app = await build(t)
  const admin = await userSession(app, 'limiter', ROLES.admin)
  const u = await userSession(app, 'limited')
  const put = async (headers: Record<string, string>, url: string, payload: object) =>
    await app.inject({ method: 'PUT', url, headers: { ...headers, 'accept-language': 'en' }, payload })
  const limitOf = async () => (await app.db.selectFrom('users').select('concurrency_limit').where('id', '=', u.user.id).executeTakeFirstOrThrow()).concurrency_limit

  const set = await put(admin.headers, '/api/user/', { id: u.user.id, concurrency_limit: 7 })
  t.equal(set.json().success, true)
  t.equal(set.json().data.concurrency_limit, 7, 'the answer shows the new limit')
  t.equal(await limitOf(), 7, 'stored')
  t.equal((await app.inject({ url: `/api/user/${u.user.id}`, headers: admin.headers })).json().data.concurrency_limit, 7, 'read back')
  t.equal((await put(admin.headers, '/api/user/', { id: u.user.id, display_name: 'Lim' })).json().data.concurrency_limit, 7, 'other edits keep it')
  t.equal((await put(admin.headers, '/api/user/', { id: u.user.id, concurrency_limit: 100_000 })).json().data.concurrency_limit, 100_000, 'up to 100000')
  t.equal((await put(admin.headers, '/api/user/', { id: u.user.id, concurrency_limit: 0 })).json().data.concurrency_limit, 0, '0 lifts the limit')
  for (const bad of [-1, 100_001, 2.5, '5']) {
    const res = await put(admin.headers, '/api/user/', { id: u.user.id, concurrency_limit: bad })
    t.equal(res.statusCode, 400, `${JSON.stringify(bad)} is refused`)
    t.equal(res.json().success, false)
  }
  t.equal(await limitOf(), 0, 'refused values change nothing')

  const self = await put(u.headers, '/api/user/self', { display_name: 'Me', concurrency_limit: 3 })
  t.equal(self.json().success, true, 'the rest of a self update goes through')
  t.equal(await limitOf(), 0, 'a user\'s own update leaves the limit alone')
  t.equal((await put(u.headers, '/api/user/', { id: u.user.id, concurrency_limit: 3 })).statusCode, 403, 'the admin route refuses a normal user')
  t.equal(await limitOf(), 0)
})
