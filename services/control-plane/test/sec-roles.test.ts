import { loadControlPlaneConfig } from '@modelgate/config'
import { SECRET_OPTIONS, ROLES } from '@modelgate/contracts'
import { fastifyOptions } from '@modelgate/service'
import { createServiceEnv } from '@modelgate/testing'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import t, { type Test } from 'tap'
import controlPlane from '../src/app.js'
import { login, ROOT, type Session, userSession, verifySession } from './helpers.js'

const EN = { 'accept-language': 'en' }
type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE'
const RANK = { public: 0, user: 1, admin: 2, root: 3 } as const
type Level = keyof typeof RANK

async function call (app: FastifyInstance, headers: Record<string, string>, method: Method, url: string, payload?: object) {
  const res = await app.inject({ method, url, headers: { ...headers, ...EN }, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, body: method === 'HEAD' || res.body === '' ? undefined : res.json(), text: res.body }
}

/** The caller as a script: the personal access token in Authorization plus New-Api-User, no cookie. */
async function accessTokenHeaders (app: FastifyInstance, s: Session): Promise<Record<string, string>> {
  const res = await call(app, s.headers, 'GET', '/api/user/token')
  if (res.body?.success !== true) throw new Error(`no access token for ${s.user.username}`)
  return { authorization: String(res.body.data), 'new-api-user': String(s.user.id) }
}

/** A control plane whose every route (not only /api) is recorded with its config as Fastify registers it. */
async function buildRecorded (t: Test) {
  const routes: RouteOptions[] = []
  const app = Fastify(fastifyOptions('control-plane', 'silent', { trustRequestId: true }))
  app.addHook('onRoute', (route) => { routes.push(route) })
  await app.register(controlPlane, { config: loadControlPlaneConfig(await createServiceEnv(t)) })
  await app.ready()
  t.teardown(() => app.close())
  return { app, routes }
}

/** Rows of the tables a refused call must not touch, for a before/after comparison. */
async function snapshot (app: FastifyInstance) {
  return {
    users: await app.db.selectFrom('users').selectAll().orderBy('id').execute(),
    channels: await app.db.selectFrom('channels').selectAll().orderBy('id').execute(),
    redemptions: await app.db.selectFrom('redemptions').selectAll().orderBy('id').execute(),
    options: await app.db.selectFrom('options').selectAll().orderBy('key').execute(),
    logs: Number((await app.db.selectFrom('logs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  }
}

/**
 * What SEC-07 (SECURITY.md) names as admin (or super admin) only: each must be declared at least
 * that level, so weakening a declaration fails here even though the route still "has" one.
 */
const MUST_BE: Record<string, Level> = {
  'GET /api/channel': 'admin',
  'GET /api/channel/search': 'admin',
  'GET /api/channel/:id': 'admin',
  'POST /api/channel': 'admin',
  'PUT /api/channel': 'admin',
  'DELETE /api/channel/:id': 'admin',
  'DELETE /api/channel/:id/': 'admin',
  'GET /api/channel/test': 'admin',
  'GET /api/channel/test/:id': 'admin',
  'GET /api/channel/fetch_models/:id': 'admin',
  'POST /api/channel/fetch_models': 'admin',
  'DELETE /api/channel/disabled': 'admin',
  'POST /api/channel/fix': 'admin',
  'PUT /api/channel/tag': 'admin',
  'GET /api/channel/:id/keys': 'admin',
  'POST /api/channel/:id/key': 'root',
  'POST /api/channel/copy/:id': 'admin',
  'GET /api/user': 'admin',
  'GET /api/user/search': 'admin',
  'GET /api/user/:id': 'admin',
  'POST /api/user': 'admin',
  'PUT /api/user': 'admin',
  'POST /api/user/manage': 'admin',
  'GET /api/user/2fa/stats': 'admin',
  'DELETE /api/user/:id/2fa': 'admin',
  'GET /api/user/:id/passkey': 'admin',
  'DELETE /api/user/:id/passkey': 'admin',
  'DELETE /api/user/:id/reset_passkey': 'admin',
  'GET /api/redemption': 'admin',
  'GET /api/redemption/search': 'admin',
  'GET /api/redemption/:id': 'admin',
  'POST /api/redemption': 'admin',
  'PUT /api/redemption': 'admin',
  'DELETE /api/redemption/:id': 'admin',
  'GET /api/user/topup': 'admin',
  'POST /api/user/topup/complete': 'admin',
  'GET /api/log': 'admin',
  'GET /api/log/stat': 'admin',
  'GET /api/mj': 'admin',
  'GET /api/task': 'admin',
  'GET /api/option': 'root',
  'PUT /api/option': 'root',
  'POST /api/option/rest_model_ratio': 'root',
  'DELETE /api/log': 'root',
  'GET /api/audit': 'root',
  'GET /api/audit/export': 'root',
  'GET /api/subscription/admin/plans': 'admin',
  'POST /api/subscription/admin/plans': 'admin',
  'PUT /api/subscription/admin/plans/:id': 'admin',
  'PATCH /api/subscription/admin/plans/:id': 'admin',
  'POST /api/subscription/admin/bind': 'admin',
  'GET /api/subscription/admin/users/:id/subscriptions': 'admin',
  'POST /api/subscription/admin/user_subscriptions/:id/invalidate': 'admin'
}

/**
 * The only /api routes anyone may call without signing in. A new public route must be added here
 * on purpose (and reviewed): the list is the inventory of the unauthenticated surface.
 */
const PUBLIC = new Set([
  'GET /api/status', 'GET /api/notice', 'GET /api/about', 'GET /api/home_page_content', 'GET /api/pricing',
  'POST /api/user/login', 'POST /api/user/login/2fa', 'POST /api/user/register', 'GET /api/user/logout', 'POST /api/user/reset',
  // Passwordless sign-in with a passkey: the challenge, and the answer that signs in.
  'POST /api/user/passkey/login/begin', 'POST /api/user/passkey/login/finish',
  'GET /api/verification', 'GET /api/reset_password',
  'GET /api/oauth/state', 'GET /api/oauth/github', 'GET /api/oauth/linuxdo', 'GET /api/oauth/wechat', 'GET /api/oauth/telegram/login',
  // The super admin's OpenID Connect / OAuth 2.0 providers: start (PKCE, state, nonce) and callback.
  'GET /api/oauth/:slug/authorize', 'GET /api/oauth/:slug',
  'GET /api/user/epay/notify', 'POST /api/user/epay/notify',
  // The epay callback of subscription orders: verified by the merchant key's signature, like the top-up's.
  'GET /api/subscription/epay/notify', 'POST /api/subscription/epay/notify',
  // First-run setup: whether an account exists, and the form that creates the first one (refused once any exists).
  'GET /api/setup', 'POST /api/setup',
  // Stripe's calls: verified by their signature against the webhook secret, never by a session.
  'POST /api/stripe/webhook',
  // Creem's calls: the creem-signature HMAC of the raw body under the webhook secret, never a session.
  'POST /api/creem/webhook',
  // Token-keyed (sk- key in Authorization), not a console session: checked by its own handler.
  'GET /api/usage/token'
])

t.test('SEC-07 a normal user reaches no admin or super-admin route, by session or access token; every /api route declares its level', async (t) => {
  await t.test('every admin and super-admin route refuses a normal user', async (t) => { await normalUserRefused(t) })
  const env = await createServiceEnv(t)
  for (const [what, config] of [['without an access level', undefined], ['with a misspelt access level', { auth: 'Admin' }]] as const) {
    await t.test(`an /api route ${what} stops the service from starting (fail closed)`, async (t) => {
      const app = Fastify(fastifyOptions('control-plane', 'silent', { trustRequestId: true }))
      t.teardown(() => app.close())
      await t.rejects(async () => {
        await app.register(controlPlane, { config: loadControlPlaneConfig(env) })
        await app.register(async (api) => {
          // As plain JavaScript (or a cast) could declare it: the types would have caught these.
          api.get('/forgotten', { config: config as object }, async () => ({ success: true, message: '', data: 'secret' }))
        }, { prefix: '/api' })
        await app.ready()
      }, /GET \/api\/forgotten declares no known access level/, 'the service refuses to start')
    })
  }
})

async function normalUserRefused (t: Test): Promise<void> {
  const { app, routes } = await buildRecorded(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const normal = await userSession(app, 'normal')
  const viaToken = await accessTokenHeaders(app, normal)

  // The route table as Fastify holds it: every /api route has an explicit level, nothing else is exposed.
  const table = routes.flatMap((r) => [r.method].flat().map((method) => ({ method, url: r.url, auth: r.config?.auth as Level | undefined })))
  const api = table.filter((r) => r.url.startsWith('/api'))
  t.ok(api.length >= 90, `the route table is populated (${api.length} /api routes)`)
  for (const r of api) t.ok(r.auth !== undefined && r.auth in RANK, `${r.method} ${r.url} declares its access level (${String(r.auth)})`)
  // Outside /api only reads: the health probes and the console's static files.
  const outside = table.filter((r) => !r.url.startsWith('/api') && r.method !== 'GET' && r.method !== 'HEAD')
  t.same(outside, [], 'no route outside /api accepts anything but GET and HEAD')
  const declared = new Map(api.filter((r) => r.method !== 'HEAD').map((r) => [`${r.method} ${r.url.replace(/\/$/, '') || '/'}`, r.auth]))
  const declaredExact = new Map(api.filter((r) => r.method !== 'HEAD').map((r) => [`${r.method} ${r.url}`, r.auth]))
  for (const [route, level] of Object.entries(MUST_BE)) {
    const got = declaredExact.get(route) ?? declared.get(route.replace(/\/$/, ''))
    t.ok(got !== undefined && RANK[got] >= RANK[level], `${route} is ${level} or above (declared ${String(got)})`)
  }
  const publicNow = [...declared].filter(([, level]) => level === 'public').map(([route]) => route).sort()
  t.same(publicNow, [...PUBLIC].sort(), 'the unauthenticated surface is exactly the reviewed list')
  t.same(app.routeAccess.length, api.filter((r) => r.method !== 'HEAD').length, 'the auth plugin saw every /api route')

  // Real ids, so a route that forgot its check would act on something rather than answer 404.
  await call(app, root.headers, 'POST', '/api/channel/', { type: 1, name: 'ch', key: 'sk-upstream', base_url: 'https://api.openai.com', models: 'gpt-4o', groups: ['default'] })
  const channelId = (await app.db.selectFrom('channels').select('id').executeTakeFirst())?.id ?? 1
  const made = await call(app, root.headers, 'POST', '/api/redemption/', { name: 'gift', quota: 1000, count: 1 })
  t.equal(made.body?.success, true, 'root made a redemption code')
  const redemptionId = (await app.db.selectFrom('redemptions').select('id').executeTakeFirstOrThrow()).id
  const ids: Record<string, number> = { channel: channelId, redemption: redemptionId, user: 1 }
  const before = await snapshot(app)

  const privileged = app.routeAccess.filter((r) => r.auth === 'admin' || r.auth === 'root')
  t.ok(privileged.length >= 40, `${privileged.length} admin and super-admin routes`)
  for (const route of privileged) {
    const resource = /^\/api\/(\w+)/.exec(route.url)?.[1] ?? ''
    const url = route.url.replace(/:(\w+)/g, String(ids[resource] ?? 1))
    const method = route.method as Method
    // A body a forgetful handler would act on: quota for the user, a new status for channels and codes.
    const payload = method === 'GET' || method === 'DELETE' ? undefined : { id: ids[resource] ?? 1, quota: 999_999_999, status: 2, role: ROLES.root, action: 'promote', key: 'Notice', value: 'owned' }
    const anonymous = await call(app, {}, method, url, payload)
    t.equal(anonymous.status, 401, `${route.method} ${route.url}: 401 without credentials`)
    for (const [how, headers] of [['session', normal.headers], ['access token', viaToken]] as const) {
      const res = await call(app, headers, method, url, payload)
      t.equal(res.status, 403, `${route.method} ${route.url}: 403 for a normal user's ${how}`)
      t.same(res.body, { success: false, message: 'Permission denied: insufficient rights for this operation' }, 'in the console\'s envelope')
    }
    if (method === 'GET') t.equal((await call(app, normal.headers, 'HEAD', url)).status, 403, `HEAD ${route.url} too`)
    // New-Api-User naming root does not lend root's rights to the normal user's credentials.
    t.equal((await call(app, { ...viaToken, 'new-api-user': String(root.user.id) }, method, url, payload)).status, 401, 'a forged New-Api-User is refused')
  }
  t.same(await snapshot(app), before, 'nothing changed: no channel, code, user, option or log was touched')
}

t.test('SEC-08 an admin cannot touch a peer admin or the super admin, cannot grant admin, and root cannot remove itself', async (t) => {
  const { app } = await buildRecorded(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const a = await userSession(app, 'admin_a', ROLES.admin)
  const b = await userSession(app, 'admin_b', ROLES.admin)
  const n = await userSession(app, 'normal_n')
  const aToken = await accessTokenHeaders(app, a)
  const R = root.user.id
  const before = await snapshot(app)

  const refused = async (who: Record<string, string>, method: Method, url: string, payload: object | undefined, what: string) => {
    const res = await call(app, who, method, url, payload)
    t.ok(((res.status === 403 || res.status === 400) && res.body?.success === false) || (res.status === 200 && res.body?.success === false), `${what}: refused (${res.status} ${String(res.body?.message)})`)
    return res
  }
  for (const [headers, via] of [[a.headers, 'session'], [aToken, 'access token']] as const) {
    for (const [target, name] of [[b.user.id, 'peer admin B'], [R, 'root']] as const) {
      t.equal((await call(app, headers, 'GET', `/api/user/${target}`)).status, 403, `A (${via}) cannot read ${name}`)
      await refused(headers, 'PUT', '/api/user/', { id: target, display_name: 'pwned', password: 'newpassword1', quota: 1, group: 'svip' }, `A (${via}) edits ${name}`)
      await refused(headers, 'PUT', '/api/user/', { id: target, role: ROLES.common }, `A (${via}) sets ${name}'s role in an edit`)
      for (const action of ['promote', 'demote', 'disable', 'enable', 'delete']) {
        await refused(headers, 'POST', '/api/user/manage', { id: target, action }, `A (${via}) ${action}s ${name}`)
      }
    }
    const promote = await refused(headers, 'POST', '/api/user/manage', { id: n.user.id, action: 'promote' }, `A (${via}) promotes a normal user`)
    t.equal(promote.body?.message, 'Only the super admin can promote or demote admins')
    await refused(headers, 'POST', '/api/user/', { username: 'sneaky', password: 'password123', role: ROLES.admin }, `A (${via}) creates an admin`)
    await refused(headers, 'POST', '/api/user/', { username: 'sneaky', password: 'password123', role: ROLES.root }, `A (${via}) creates a super admin`)
    await refused(headers, 'POST', '/api/user/', { username: 'sneaky', password: 'password123', role: 50 }, `A (${via}) creates an unknown high role`)
    await refused(headers, 'PUT', '/api/user/', { id: a.user.id, role: ROLES.root }, `A (${via}) edits itself through the admin route`)
  }
  // Role (and other privileged) fields in bodies the caller may send are ignored, never applied.
  const edit = await call(app, a.headers, 'PUT', '/api/user/', { id: n.user.id, role: ROLES.root, status: 1, deleted_at: null })
  t.ok(edit.body?.success === false || edit.body?.data?.role === ROLES.common, 'role in an admin\'s edit of a normal user is ignored or refused')
  for (const [headers, via] of [[a.headers, 'session'], [aToken, 'access token']] as const) {
    const self = await call(app, headers, 'PUT', '/api/user/self', { role: ROLES.root, quota: 999_999_999, group: 'svip', status: 1, username: 'root' })
    t.ok(self.body?.success === false || self.body?.data?.role === ROLES.admin, `role in A's own profile (${via}) is ignored or refused`)
  }
  const nSelf = await call(app, n.headers, 'PUT', '/api/user/self', { role: ROLES.root, access_token: 'x' })
  t.ok(nSelf.body?.success === false || nSelf.body?.data?.role === ROLES.common, 'a normal user\'s own profile edit ignores role too')

  // The super admin cannot remove itself, by any route.
  for (const action of ['disable', 'delete', 'demote']) {
    const res = await refused(root.headers, 'POST', '/api/user/manage', { id: R, action }, `root ${action}s itself`)
    t.not(res.body?.data?.role, ROLES.common)
  }
  await refused(root.headers, 'PUT', '/api/user/', { id: R, role: ROLES.common, group: 'x' }, 'root edits itself through the admin route')
  await refused(root.headers, 'DELETE', '/api/user/self', undefined, 'root deletes its own account')
  await refused(root.headers, 'POST', '/api/user/', { username: 'root2', password: 'password123', role: ROLES.root }, 'root creates a second super admin')
  t.equal((await call(app, root.headers, 'POST', '/api/user/', { username: 'odd', password: 'password123', role: 50 })).status, 400, 'roles other than normal and admin cannot be created')

  t.same(await snapshot(app), before, 'every row is as it was')
  const roots = await app.db.selectFrom('users').select('id').where('role', '>=', ROLES.root).where('status', '=', 1).where('deleted_at', 'is', null).execute()
  t.same(roots.map((r) => r.id), [R], 'exactly one live, enabled super admin')
  t.equal((await call(app, root.headers, 'GET', '/api/user/self')).body?.data?.role, ROLES.root, 'root still signs in as root')

  // What root may do still works: the refusals above are about rank, not a blanket lock.
  t.equal((await call(app, root.headers, 'POST', '/api/user/manage', { id: n.user.id, action: 'promote' })).body?.data?.role, ROLES.admin, 'root promotes')
  t.equal((await call(app, root.headers, 'POST', '/api/user/manage', { id: b.user.id, action: 'disable' })).body?.data?.status, 2, 'root disables an admin')
})

t.test('SEC-10 option secrets are write-only: masked on read, absent from /api/status, kept when a form is saved whole; admins get 403', async (t) => {
  const { app } = await buildRecorded(t)
  const root = await login(app, ROOT.username, ROOT.password)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const normal = await userSession(app, 'normal')
  const adminToken = await accessTokenHeaders(app, admin)
  const secrets: Record<string, string> = {
    EpayKey: 'epay-key-5f1c', SMTPToken: 'smtp-token-9a2e', GitHubClientSecret: 'gh-secret-77d0', LinuxDOClientSecret: 'linuxdo-secret-3b8a',
    TelegramBotToken: '123456:tg-bot-token-c4e1', TurnstileSecretKey: 'turnstile-secret-0x6f', WeChatServerToken: 'wechat-token-e5d2', WorkerValidKey: 'worker-valid-key-19ac',
    StripeApiSecret: 'sk_test_stripe-secret-4d1a', StripeWebhookSecret: 'whsec_stripe-webhook-8c3b',
    CreemApiKey: 'creem_test_api-key-6e0f', CreemWebhookSecret: 'whsec_creem-webhook-2a7d'
  }
  t.same(Object.keys(secrets).sort(), [...SECRET_OPTIONS].sort(), 'every credential option of the product is covered')
  const stored = async (key: string) => (await app.db.selectFrom('options').select('value').where('key', '=', key).executeTakeFirst())?.value
  const put = async (headers: Record<string, string>, payload: object) => await call(app, headers, 'PUT', '/api/option/', payload)
  t.equal((await put(root.headers, { key: 'ServerAddress', value: 'https://gw.example.com' })).body?.success, true, 'the payment settings need a server address first')
  // Setting a credential needs a fresh secure verification (test/two-factor.test.ts).
  await verifySession(app, root.headers, ROOT.password)
  for (const [key, value] of Object.entries(secrets)) {
    const res = await put(root.headers, { key, value })
    t.equal(res.body?.success, true, `root sets ${key}`)
    t.notMatch(res.text, value, `the answer to setting ${key} does not echo it`)
  }
  await put(root.headers, { key: 'GitHubClientId', value: 'gh-client-id-public' })
  const leaks = (text: string) => Object.entries(secrets).filter(([, v]) => text.includes(v)).map(([k]) => k)

  // Root reads every option: credentials only say that they are set.
  const read = await call(app, root.headers, 'GET', '/api/option/')
  t.equal(read.status, 200)
  t.same(leaks(read.text), [], 'no credential value in GET /api/option/')
  const items = read.body.data as Array<{ key: string, value: string, secret?: boolean, is_set?: boolean }>
  for (const key of Object.keys(secrets)) t.match(items.find((i) => i.key === key), { value: '', secret: true, is_set: true }, `${key} is write-only`)

  // /api/status is the public status object, the same for everyone, with no credential in it.
  const statuses = [await call(app, {}, 'GET', '/api/status'), await call(app, normal.headers, 'GET', '/api/status'), await call(app, root.headers, 'GET', '/api/status')]
  for (const s of statuses) {
    t.equal(s.status, 200)
    t.same(leaks(s.text), [], 'no credential value in /api/status')
    const keys = Object.keys(s.body.data as object)
    t.same(keys.filter((k) => /secret|bot_token|server_token|smtp|epay|valid_key|worker/i.test(k)), [], 'no credential-like field in /api/status')
  }
  t.equal(statuses[0]!.body.data.github_client_id, 'gh-client-id-public', 'public identifiers are there')
  t.same(statuses[0]!.body, statuses[2]!.body, 'root sees the same status object as an anonymous caller')
  for (const url of ['/api/notice', '/api/about', '/api/home_page_content', '/api/pricing']) {
    t.same(leaks((await call(app, {}, 'GET', url)).text), [], `no credential value in ${url}`)
  }

  // An admin (role 10) owns no options: 403 on every option route, and nothing stored changes.
  const before = await snapshot(app)
  for (const headers of [admin.headers, adminToken, normal.headers]) {
    const got = await call(app, headers, 'GET', '/api/option/')
    t.equal(got.status, 403, 'GET /api/option/ is for the super admin')
    t.same(leaks(got.text), [])
    t.equal((await put(headers, { key: 'SMTPToken', value: 'admin-was-here' })).status, 403, 'PUT /api/option/ is for the super admin')
    t.equal((await put(headers, { key: 'Notice', value: 'admin-was-here' })).status, 403)
    t.equal((await call(app, headers, 'POST', '/api/option/rest_model_ratio')).status, 403)
  }
  t.same(await snapshot(app), before, 'no option changed')

  // The console saving a whole form sends back what it read ('' or a mask) for each credential: kept.
  for (const item of items.filter((i) => i.secret === true)) {
    for (const placeholder of [item.value, '********']) {
      const res = await put(root.headers, { key: item.key, value: placeholder })
      t.equal(res.body?.success, true, `saving ${item.key} back as ${JSON.stringify(placeholder)} is accepted`)
      t.equal(await stored(item.key), secrets[item.key], `${item.key} keeps its real value`)
    }
  }
  // A new value replaces it; clearing is explicit.
  t.equal((await put(root.headers, { key: 'SMTPToken', value: 'smtp-token-rotated' })).body?.success, true)
  t.equal(await stored('SMTPToken'), 'smtp-token-rotated', 'a typed value replaces the credential')
  t.equal((await put(root.headers, { key: 'EpayKey', value: '', clear: true })).body?.success, true)
  t.equal(await stored('EpayKey') ?? '', '', 'clear: true removes a credential')
  const after = (await call(app, root.headers, 'GET', '/api/option/')).body.data as Array<{ key: string, is_set?: boolean }>
  t.equal(after.find((i) => i.key === 'EpayKey')?.is_set, false)
  t.equal(after.find((i) => i.key === 'SMTPToken')?.is_set, true)
  t.equal((await put(root.headers, { key: 'Notice', value: '', clear: true })).body?.success, false, 'clear applies to credentials only')
})
