import { ROLES } from '@modelgate/contracts'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build, login, sharedEnv } from './helpers.js'

const EN = { 'accept-language': 'en' }
const ZH = { 'accept-language': 'zh-CN' }
/** No INITIAL_ROOT_PASSWORD: an empty value is unset, so the database starts with no account. */
const NO_ROOT = { INITIAL_ROOT_PASSWORD: '' }
const FORM = { username: 'owner', password: 'Owner-pass-1', confirmPassword: 'Owner-pass-1' }

async function status (app: FastifyInstance) {
  const res = await app.inject({ method: 'GET', url: '/api/setup' })
  return res.json()
}

async function setUp (app: FastifyInstance, payload: object, lang = EN) {
  const res = await app.inject({ method: 'POST', url: '/api/setup', headers: lang, payload })
  return { status: res.statusCode, body: res.json() }
}

const users = async (app: FastifyInstance) =>
  await app.db.selectFrom('users').select(['username', 'role', 'password_is_default', 'quota']).orderBy('id').execute()

t.test('a fresh database without INITIAL_ROOT_PASSWORD waits for setup; the form creates the super admin once', async (t) => {
  const app = await build(t, NO_ROOT)
  t.same(await users(app), [], 'no account is created at start')
  t.same(await status(app), { success: true, message: '', data: { status: false, root_init: false, database_type: 'postgres' } })
  t.equal((await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: 'root', password: '123456' } })).json().success, false, 'no root / 123456')

  t.same((await setUp(app, { ...FORM, confirmPassword: 'Other-pass-1' })).body, { success: false, message: 'The two passwords differ' })
  t.same((await setUp(app, { ...FORM, password: 'short', confirmPassword: 'short' })).body, { success: false, message: 'Password must be 8 to 20 characters' }, 'the registration rules')
  t.equal((await setUp(app, { ...FORM, password: 'short', confirmPassword: 'short' }, ZH)).body.message, '密码长度必须为 8 到 20 个字符', 'in the caller\'s language')
  t.same((await setUp(app, { ...FORM, username: 'a-name-too-long' })).body, { success: false, message: 'Username must be 1 to 12 characters' })
  t.same((await setUp(app, { ...FORM, username: '' })).body, { success: false, message: 'Username and password cannot be empty' })
  t.equal((await setUp(app, { username: 'owner', password: 'Owner-pass-1' })).status, 400, 'the confirmation is required')
  t.same(await users(app), [], 'refused forms create nothing')

  const done = await setUp(app, { ...FORM, SelfUseModeEnabled: true, DemoSiteEnabled: false })
  t.same(done.body, { success: true, message: 'Setup complete: sign in as owner', data: null })
  t.same(await users(app), [{ username: 'owner', role: ROLES.root, password_is_default: false, quota: 100_000_000 }], 'a super admin whose password is not flagged')
  t.same((await status(app)).data, { status: true, root_init: true, database_type: 'postgres' }, 'setup is done')
  const session = await login(app, 'owner', 'Owner-pass-1')
  t.equal(session.user.role, ROLES.root, 'the new super admin signs in')

  t.same((await setUp(app, { ...FORM, username: 'intruder' })).body, { success: false, message: 'The system is already set up' }, 'a second setup is refused')
  t.equal((await setUp(app, { ...FORM, username: 'intruder' }, ZH)).body.message, '系统已经初始化完成')
  t.equal((await users(app)).length, 1, 'still one account')
})

t.test('concurrent setups create exactly one account, whatever their usernames', async (t) => {
  const env = await sharedEnv(t, NO_ROOT)
  // Two replicas on one database: the requests race across processes' pools, not one.
  const [a, b] = [await build(t, {}, env), await build(t, {}, env)]
  const results = await Promise.all(Array.from({ length: 8 }, async (_, i) =>
    await setUp(i % 2 === 0 ? a : b, { username: `owner${i}`, password: 'Owner-pass-1', confirmPassword: 'Owner-pass-1' })))
  t.equal(results.filter((r) => r.body.success === true).length, 1, 'one setup succeeds')
  t.ok(results.filter((r) => r.body.success !== true).every((r) => r.body.message === 'The system is already set up'), 'the others are refused')
  const rows = await users(a)
  t.equal(rows.length, 1, 'one account')
  t.equal(rows[0]?.role, ROLES.root)
})

t.test('setup is refused once any account exists, even without a super admin', async (t) => {
  const app = await build(t, NO_ROOT)
  await app.db.insertInto('users').values({ username: 'someone', password_hash: '', role: ROLES.common }).execute()
  t.same((await status(app)).data, { status: true, root_init: false, database_type: 'postgres' })
  t.same((await setUp(app, FORM)).body, { success: false, message: 'The system is already set up' })
})

t.test('with INITIAL_ROOT_PASSWORD set, root is created at start and setup reports done', async (t) => {
  const app = await build(t, { INITIAL_ROOT_PASSWORD: 'Init1al-Passw0rd' })
  t.same((await status(app)).data, { status: true, root_init: true, database_type: 'postgres' })
  t.same(await users(app), [{ username: 'root', role: ROLES.root, password_is_default: false, quota: 100_000_000 }])
  await login(app, 'root', 'Init1al-Passw0rd')
  t.same((await setUp(app, FORM)).body, { success: false, message: 'The system is already set up' })

  const legacy = await build(t, { INITIAL_ROOT_PASSWORD: '123456' })
  t.same(await users(legacy), [{ username: 'root', role: ROLES.root, password_is_default: true, quota: 100_000_000 }], 'INITIAL_ROOT_PASSWORD=123456: the well-known default, flagged')
  t.same((await status(legacy)).data.status, true)
})
