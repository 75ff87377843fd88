import { generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { findUserById } from '@modelgate/db'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import Provider, { type Configuration } from 'oidc-provider'
import t, { type Test } from 'tap'
import { build, login, ROOT, type Session, userSession, verifySession } from './helpers.js'

const EN = { 'accept-language': 'en' }
/** The console's address as the provider knows it: where it sends the browser back. */
const CONSOLE = 'http://console.test'
const CLIENT_ID = 'modelgate-console'
const CLIENT_SECRET = 'a-real-client-secret-0123456789'
/** Every slug the tests give a provider: each needs its redirect URI registered at the provider. */
const SLUGS = ['acme', 'acme-wrong', 'acme-forged', 'plain', 'other']

interface Account { email?: string, email_verified?: boolean, name?: string, preferred_username?: string }

const b64u = (value: Buffer | string) => Buffer.from(value).toString('base64url')

/** A JWS (RS256) over `payload` with `key`, its header naming `kid`. */
function signJwt (payload: Record<string, unknown>, key: KeyObject, kid: string): string {
  const input = `${b64u(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }))}.${b64u(JSON.stringify(payload))}`
  return `${input}.${b64u(sign('sha256', Buffer.from(input), key))}`
}

function decodePayload (jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>
}

async function listen (t: Test, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => { resolve() })
  }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/**
 * A real OpenID provider (the `oidc-provider` package) on 127.0.0.1: one confidential client with
 * PKCE required, the test accounts, ID tokens signed with an RSA key the test holds too (so it can
 * forge tokens that differ from genuine ones in one claim only), its development login and
 * consent pages.
 */
async function startOidcProvider (t: Test, accounts: Record<string, Account>) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const kid = 'test-key-1'
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }
  const configuration: Configuration = {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: SLUGS.map((slug) => `${CONSOLE}/oauth/${slug}`),
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic'
    }],
    pkce: { required: () => true },
    jwks: { keys: [jwk] as NonNullable<Configuration['jwks']>['keys'] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx, sub) => {
      const claims = accounts[sub]
      if (claims === undefined) return undefined
      return { accountId: sub, claims: () => ({ sub, ...claims }) }
    }
  }
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const provider = new Provider(issuer, configuration)
  server.on('request', provider.callback())
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => { resolve() })
  }))
  return { issuer, privateKey, kid }
}

type Tamper = (payload: Record<string, unknown>) => { payload: Record<string, unknown>, key?: KeyObject }

/**
 * A man in the middle of the token endpoint: passes requests to the real one and, while `tamper`
 * is set, replaces the ID token of the answer by one it signs itself.
 */
async function startTokenProxy (t: Test, tokenEndpoint: string, signer: { privateKey: KeyObject, kid: string }) {
  const proxy = {
    tamper: undefined as Tamper | undefined,
    url: ''
  }
  proxy.url = await listen(t, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const headers: Record<string, string> = {}
      for (const name of ['authorization', 'content-type', 'accept']) {
        const value = req.headers[name]
        if (typeof value === 'string') headers[name] = value
      }
      fetch(tokenEndpoint, { method: req.method, headers, body: Buffer.concat(chunks) }).then(async (upstream) => {
        const body = await upstream.json() as Record<string, unknown>
        if (proxy.tamper !== undefined && typeof body['id_token'] === 'string') {
          const { payload, key } = proxy.tamper(decodePayload(body['id_token']))
          body['id_token'] = signJwt(payload, key ?? signer.privateKey, signer.kid)
        }
        res.writeHead(upstream.status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      }, () => { res.writeHead(502).end() })
    })
  })
  return proxy
}

/**
 * The browser's part at the provider: follows the authorization URL through the provider's
 * login (as `account`) and consent pages, keeping its cookies, until the provider sends the
 * browser back to the console; that address (with code, state and iss).
 */
async function authorizeAt (authorizationUrl: string, account: string): Promise<URL> {
  const origin = new URL(authorizationUrl).origin
  const jar = new Map<string, string>()
  let url = authorizationUrl
  let body: URLSearchParams | undefined
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      body,
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') }
    })
    for (const cookie of res.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';')
      const eq = pair.indexOf('=')
      jar.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    const location = res.headers.get('location')
    if (res.status >= 300 && res.status < 400 && location !== null) {
      const next = new URL(location, url)
      if (next.origin !== origin) return next
      url = next.href
      body = undefined
      continue
    }
    const html = await res.text()
    if (res.status !== 200) throw new Error(`the provider answered ${res.status}: ${html.slice(0, 500)}`)
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
    if (action === undefined) throw new Error(`no form on the provider's page: ${html.slice(0, 500)}`)
    url = new URL(action.replaceAll('&amp;', '&'), url).href
    if (html.includes('name="prompt" value="login"')) body = new URLSearchParams({ prompt: 'login', login: account, password: 'any password' })
    else if (html.includes('name="prompt" value="consent"')) body = new URLSearchParams({ prompt: 'consent' })
    else throw new Error(`an unexpected page at the provider: ${html.slice(0, 500)}`)
  }
  throw new Error('the provider never sent the browser back')
}

function cookieOf (res: LightMyRequestResponse, name: string): string | undefined {
  return [res.headers['set-cookie']].flat().find((c) => c?.startsWith(`${name}=`))?.split(';')[0]
}

/** A sign-in started by the console: the authorization URL and the state cookie it came with. */
interface Started { url: string, cookie: string }

async function start (app: FastifyInstance, slug: string, opts: { session?: Session, aff?: string } = {}): Promise<Started> {
  const query = opts.aff === undefined ? '' : `?aff=${encodeURIComponent(opts.aff)}`
  const res = await app.inject({ url: `/api/oauth/${slug}/authorize${query}`, headers: { ...EN, ...opts.session?.headers } })
  const body = res.json()
  if (body.success !== true) throw new Error(`authorize failed: ${res.body}`)
  const cookie = cookieOf(res, 'oauth_state')
  if (cookie === undefined) throw new Error('no oauth_state cookie')
  return { url: body.data.url as string, cookie }
}

/** The console's callback page calling the API with what the provider sent back. */
async function callback (app: FastifyInstance, slug: string, back: URL, cookie: string, session?: Session): Promise<LightMyRequestResponse> {
  return await app.inject({
    url: `/api/oauth/${slug}${back.search}`,
    headers: { ...EN, ...session?.headers, cookie: [cookie, session?.headers['cookie']].filter((c) => c !== undefined).join('; ') }
  })
}

/** A whole sign-in through the provider as `account`; the answer of the console's callback call. */
async function signIn (app: FastifyInstance, slug: string, account: string, opts: { session?: Session, aff?: string } = {}): Promise<LightMyRequestResponse> {
  const flow = await start(app, slug, opts)
  return await callback(app, slug, await authorizeAt(flow.url, account), flow.cookie, opts.session)
}

async function counts (app: FastifyInstance): Promise<{ users: number, links: number }> {
  const users = await app.db.selectFrom('users').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  const links = await app.db.selectFrom('custom_oauth_links').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  return { users: Number(users.n), links: Number(links.n) }
}

/** Root's session, verified for credential changes. */
async function rootSession (app: FastifyInstance): Promise<Session> {
  const root = await login(app, ROOT.username, ROOT.password)
  await verifySession(app, root.headers, ROOT.password)
  return root
}

async function createProvider (app: FastifyInstance, root: Session, body: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: '/api/custom-oauth-provider/', headers: { ...EN, ...root.headers }, payload: body })
  return res.json()
}

const ACCOUNTS: Record<string, Account> = {
  alice: { email: 'alice@idp.example', email_verified: true, name: 'Alice Liddell', preferred_username: 'alice' },
  bob: { email: 'bob@idp.example', email_verified: false, name: 'Bob', preferred_username: 'bob' },
  carol: { name: 'Carol' },
  dave: { name: 'Dave', preferred_username: 'dave' },
  erin: { name: 'Erin' }
}

/** A control plane, the provider, root, and the provider added through discovery as `acme`. */
async function setup (t: Test, extra: Record<string, unknown> = {}) {
  const idp = await startOidcProvider(t, ACCOUNTS)
  const app = await build(t)
  await app.saveOptions({ ServerAddress: CONSOLE })
  const root = await rootSession(app)
  const found = await app.inject({ method: 'POST', url: '/api/custom-oauth-provider/discovery', headers: { ...EN, ...root.headers }, payload: { issuer: idp.issuer } })
  const discovered = found.json().data
  const created = await createProvider(app, root, {
    name: 'Acme SSO',
    slug: 'acme',
    kind: 'oidc',
    enabled: true,
    issuer: discovered.issuer,
    authorization_endpoint: discovered.authorization_endpoint,
    token_endpoint: discovered.token_endpoint,
    user_info_endpoint: discovered.user_info_endpoint,
    jwks_url: discovered.jwks_url,
    scopes: discovered.scopes,
    token_endpoint_auth_method: discovered.token_endpoint_auth_method,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    ...extra
  })
  if (created.success !== true) throw new Error(`create failed: ${created.message}`)
  return { app, idp, root, discovered, provider: created.data as { id: number } & Record<string, unknown> }
}

t.test('discovery reads the issuer\'s metadata through the outbound guard and refuses metadata addresses', async (t) => {
  const idp = await startOidcProvider(t, ACCOUNTS)
  const app = await build(t)
  const root = await rootSession(app)
  const discover = async (payload: Record<string, unknown>, headers = root.headers) =>
    (await app.inject({ method: 'POST', url: '/api/custom-oauth-provider/discovery', headers: { ...EN, ...headers }, payload })).json()

  const found = await discover({ issuer: idp.issuer })
  t.equal(found.success, true, found.message)
  t.match(found.data, {
    well_known_url: `${idp.issuer}/.well-known/openid-configuration`,
    issuer: idp.issuer,
    authorization_endpoint: `${idp.issuer}/auth`,
    token_endpoint: `${idp.issuer}/token`,
    user_info_endpoint: `${idp.issuer}/me`,
    jwks_url: `${idp.issuer}/jwks`,
    scopes: 'openid profile email',
    token_endpoint_auth_method: 'client_secret_basic'
  })
  t.ok(Array.isArray(found.data.discovery.code_challenge_methods_supported), 'the document itself comes along')
  t.equal((await discover({ well_known_url: `${idp.issuer}/.well-known/openid-configuration` })).data.token_endpoint, `${idp.issuer}/token`, 'or the document\'s own address')

  for (const target of ['http://169.254.169.254/latest', 'http://metadata.google.internal/computeMetadata', 'http://[fd00:ec2::254]/']) {
    const refused = await discover({ issuer: target })
    t.equal(refused.success, false, target)
    t.match(refused.message, /is refused: it is a cloud metadata or link-local address/, `${target}: the guard's reason`)
  }
  const missing = await discover({ issuer: `${idp.issuer}/elsewhere` })
  t.same(missing, { success: false, message: 'Reading the discovery document failed: unexpected HTTP response status code' }, 'no document there')
  const otherName = idp.issuer.replace('127.0.0.1', 'localhost')
  const mismatch = await discover({ issuer: otherName })
  t.same(mismatch, { success: false, message: `The discovery document names the issuer ${idp.issuer}, not ${otherName}` }, 'a document naming another issuer is not taken')
  t.same(await discover({}), { success: false, message: 'Enter the issuer URL (or the discovery document URL)' })

  const user = await userSession(app, 'plainuser')
  const denied = await app.inject({ method: 'POST', url: '/api/custom-oauth-provider/discovery', headers: user.headers, payload: { issuer: idp.issuer } })
  t.equal(denied.statusCode, 403, 'root only')
  const list = await app.inject({ url: '/api/custom-oauth-provider/', headers: user.headers })
  t.equal(list.statusCode, 403)
})

t.test('root manages providers: the client secret is sealed and write-only, endpoints are checked, changes are audited', async (t) => {
  const { app, root, provider, discovered } = await setup(t)
  t.match(provider, { name: 'Acme SSO', slug: 'acme', kind: 'oidc', enabled: true, client_id: CLIENT_ID, client_secret_set: true, client_secret_hint: 'a-r…6789' })
  t.notOk('client_secret' in provider, 'the secret never comes back')
  const stored = await app.db.selectFrom('custom_oauth_providers').selectAll().where('id', '=', provider.id).executeTakeFirstOrThrow()
  t.match(stored.client_secret_encrypted, /^v1:/, 'sealed with the app\'s SecretBox')
  t.notOk(stored.client_secret_encrypted.includes(CLIENT_SECRET))
  t.equal(app.secrets.open(stored.client_secret_encrypted), CLIENT_SECRET)

  const listed = (await app.inject({ url: '/api/custom-oauth-provider/', headers: root.headers })).json()
  t.equal(listed.data.length, 1)
  t.notOk(JSON.stringify(listed).includes(CLIENT_SECRET), 'the list holds no secret')
  const one = (await app.inject({ url: `/api/custom-oauth-provider/${provider.id}`, headers: root.headers })).json()
  t.equal(one.data.slug, 'acme')

  const renamed = (await app.inject({ method: 'PUT', url: `/api/custom-oauth-provider/${provider.id}`, headers: { ...EN, ...root.headers }, payload: { name: 'Acme', client_secret: '' } })).json()
  t.equal(renamed.success, true, renamed.message)
  t.equal(renamed.data.name, 'Acme')
  const kept = await app.db.selectFrom('custom_oauth_providers').select('client_secret_encrypted').where('id', '=', provider.id).executeTakeFirstOrThrow()
  t.equal(app.secrets.open(kept.client_secret_encrypted), CLIENT_SECRET, 'a blank secret keeps the stored one')

  const fresh = await login(app, ROOT.username, ROOT.password)
  const unverified = await app.inject({ method: 'PUT', url: `/api/custom-oauth-provider/${provider.id}`, headers: { ...EN, ...fresh.headers }, payload: { client_secret: 'another-secret-value' } })
  t.equal(unverified.statusCode, 403, 'replacing the secret needs a fresh verification')
  t.equal(unverified.json().data.require_verification, true)

  const metadata = (await app.inject({ method: 'PUT', url: `/api/custom-oauth-provider/${provider.id}`, headers: { ...EN, ...root.headers }, payload: { token_endpoint: 'http://169.254.169.254/token' } })).json()
  t.equal(metadata.success, false)
  t.match(metadata.message, /169\.254\.169\.254 is refused: it is a cloud metadata/, 'a metadata token endpoint is refused on save')
  const missing = await createProvider(app, root, { name: 'No JWKS', slug: 'other', client_id: 'x', client_secret: 'y', issuer: discovered.issuer, authorization_endpoint: discovered.authorization_endpoint, token_endpoint: discovered.token_endpoint })
  t.same(missing, { success: false, message: 'The JWKS URL is required for this kind of provider' })
  const reserved = await createProvider(app, root, { name: 'GitHub', slug: 'github', client_id: 'x', client_secret: 'y' })
  t.same(reserved, { success: false, message: 'The slug github is reserved for a built-in sign-in method' })
  const taken = await createProvider(app, root, { ...discovered, name: 'Again', slug: 'acme', client_id: 'x', client_secret: 'y' })
  t.same(taken, { success: false, message: 'The slug acme is already used by another provider' })
  const noSecret = await createProvider(app, root, { name: 'Other', slug: 'other', kind: 'oidc', issuer: discovered.issuer, authorization_endpoint: discovered.authorization_endpoint, token_endpoint: discovered.token_endpoint, jwks_url: discovered.jwks_url, client_id: 'x' })
  t.same(noSecret, { success: false, message: 'The client secret is required' })

  const audit = await app.db.selectFrom('audit_logs').selectAll().where('target_type', '=', 'oauth_provider').orderBy('id').execute()
  t.same(audit.map((a) => a.action), ['oauth_provider.create', 'oauth_provider.update'])
  t.equal((audit[0]?.changes as Record<string, { after?: unknown }>)['client_secret']?.after, '[changed]', 'the secret is written as changed, never as a value')
  t.notOk(JSON.stringify(audit).includes(CLIENT_SECRET))
  t.same(audit[1]?.changes, { name: { before: 'Acme SSO', after: 'Acme' } }, 'an update records what changed')

  const status = (await app.inject('/api/status')).json().data
  t.same(status.custom_oauth_providers, [{ id: provider.id, slug: 'acme', name: 'Acme' }], '/api/status lists the enabled provider for the login page')
  await app.inject({ method: 'PUT', url: `/api/custom-oauth-provider/${provider.id}`, headers: root.headers, payload: { enabled: false } })
  t.same((await app.inject('/api/status')).json().data.custom_oauth_providers, [], 'a disabled one is not listed')

  const deleted = (await app.inject({ method: 'DELETE', url: `/api/custom-oauth-provider/${provider.id}`, headers: { ...EN, ...root.headers } })).json()
  t.same(deleted, { success: true, message: 'Provider deleted', data: null })
  t.equal((await app.db.selectFrom('audit_logs').select('action').where('target_type', '=', 'oauth_provider').orderBy('id', 'desc').executeTakeFirst())?.action, 'oauth_provider.delete')
})

t.test('a first sign-in registers the account, the same subject signs in again, and two-factor accounts get the second step', async (t) => {
  const { app, provider } = await setup(t)
  const before = await counts(app)
  const res = await signIn(app, 'acme', 'alice')
  const body = res.json()
  t.equal(body.success, true, body.message)
  t.equal(body.message, 'Logged in')
  t.match(body.data, { username: 'alice', display_name: 'Alice Liddell', email: 'alice@idp.example', role: 1, status: 1 })
  t.equal(cookieOf(res, 'oauth_state'), 'oauth_state=', 'the state cookie is cleared')
  const session = cookieOf(res, 'session')
  t.ok(session, 'a session starts')
  const self = await app.inject({ url: '/api/user/self', headers: { cookie: session!, 'new-api-user': String(body.data.id) } })
  t.equal(self.json().data.id, body.data.id, 'the session works')
  t.same(await counts(app), { users: before.users + 1, links: before.links + 1 })
  const link = await app.db.selectFrom('custom_oauth_links').selectAll().executeTakeFirstOrThrow()
  t.match(link, { user_id: body.data.id, provider_id: provider.id, subject: 'alice' })

  const again = await signIn(app, 'acme', 'alice')
  t.equal(again.json().data.id, body.data.id, 'the same subject signs into the same account')
  t.same(await counts(app), { users: before.users + 1, links: before.links + 1 }, 'nothing new')

  // The provider does not vouch for bob's address: the account is made without it.
  const bob = await signIn(app, 'acme', 'bob')
  t.equal(bob.json().success, true)
  t.equal(bob.json().data.email, '', 'an unverified e-mail is not taken')

  await app.db.insertInto('two_factor_auth').values({ user_id: body.data.id, secret_encrypted: app.secrets.seal('JBSWY3DPEHPK3PXP'), enabled: true, enabled_at: 1, last_used_step: 0 }).execute()
  const twoFactor = await signIn(app, 'acme', 'alice')
  t.match(twoFactor.json(), { success: true, data: { require_2fa: true, flow_token: /^[\w-]{20,}$/ } }, 'a two-factor account gets the second step')
  t.equal(cookieOf(twoFactor, 'session'), undefined, 'and no session yet')
})

t.test('signing in while signed in binds the account; a bound subject cannot be bound again; unbinding is guarded', async (t) => {
  const { app, provider } = await setup(t)
  const carolUser = await userSession(app, 'carol-local')
  const bound = await signIn(app, 'acme', 'carol', { session: carolUser })
  t.equal(bound.json().success, true, bound.json().message)
  t.equal(bound.json().message, 'bind', 'the console tells a binding by this message')
  t.equal(bound.json().data.id, carolUser.user.id)
  t.equal(cookieOf(bound, 'session'), undefined, 'binding starts no new session')

  const bindings = (await app.inject({ url: '/api/user/oauth/bindings', headers: carolUser.headers })).json()
  t.match(bindings.data, [{ provider_id: provider.id, provider_name: 'Acme SSO', provider_slug: 'acme', provider_enabled: true, provider_user_id: 'carol' }])

  const viaProvider = await signIn(app, 'acme', 'carol')
  t.equal(viaProvider.json().data.id, carolUser.user.id, 'the bound subject signs into carol-local')

  const other = await userSession(app, 'other-local')
  const before = await counts(app)
  const taken = await signIn(app, 'acme', 'carol', { session: other })
  t.same(taken.json(), { success: false, message: 'This Acme SSO account is already bound to another user' })
  t.same(await counts(app), before, 'nothing changed')

  const root = await rootSession(app)
  const refusedDelete = (await app.inject({ method: 'DELETE', url: `/api/custom-oauth-provider/${provider.id}`, headers: { ...EN, ...root.headers } })).json()
  t.same(refusedDelete, { success: false, message: '1 user(s) are bound to this provider, so it cannot be deleted; disable it instead' })

  const unbind = (await app.inject({ method: 'DELETE', url: `/api/user/oauth/bindings/${provider.id}`, headers: { ...EN, ...carolUser.headers } })).json()
  t.same(unbind, { success: true, message: 'Unbound', data: null }, 'an account with a password may unbind')
  t.same((await app.inject({ url: '/api/user/oauth/bindings', headers: carolUser.headers })).json().data, [])

  // erin signs up through the provider: no password, no e-mail, nothing else to sign in with.
  const erin = await signIn(app, 'acme', 'erin')
  const erinHeaders = { cookie: cookieOf(erin, 'session')!, 'new-api-user': String(erin.json().data.id) }
  const last = (await app.inject({ method: 'DELETE', url: `/api/user/oauth/bindings/${provider.id}`, headers: { ...EN, ...erinHeaders } })).json()
  t.same(last, { success: false, message: 'This is the only way to sign in to your account; set a password or bind another sign-in method first' })
})

t.test('sign-up follows the rules of GitHub: RegisterEnabled and the provider\'s own switch', async (t) => {
  const { app, root, provider } = await setup(t, { auto_register: false })
  const before = await counts(app)
  const closed = await signIn(app, 'acme', 'dave')
  t.same(closed.json(), { success: false, message: 'New accounts cannot be created through Acme SSO; sign in with an existing account and bind Acme SSO in the personal settings' })
  t.same(await counts(app), before, 'no user, no link')

  await app.inject({ method: 'PUT', url: `/api/custom-oauth-provider/${provider.id}`, headers: root.headers, payload: { auto_register: true } })
  await app.saveOptions({ RegisterEnabled: 'false' })
  const registration = await signIn(app, 'acme', 'dave')
  t.same(registration.json(), { success: false, message: 'The administrator has closed new registrations' })
  t.same(await counts(app), before)

  await app.saveOptions({ RegisterEnabled: 'true' })
  const open = await signIn(app, 'acme', 'dave')
  t.equal(open.json().success, true)
  t.equal(open.json().data.username, 'dave')
})

t.test('refusals are clear and change nothing', async (t) => {
  const { app, idp, root, discovered, provider } = await setup(t)
  const proxy = await startTokenProxy(t, discovered.token_endpoint, idp)
  const forged = await createProvider(app, root, { ...discovered, name: 'Acme via proxy', slug: 'acme-forged', kind: 'oidc', enabled: true, token_endpoint: proxy.url, client_id: CLIENT_ID, client_secret: CLIENT_SECRET })
  t.equal(forged.success, true, forged.message)
  const wrong = await createProvider(app, root, { ...discovered, name: 'Acme wrong secret', slug: 'acme-wrong', kind: 'oidc', enabled: true, client_id: CLIENT_ID, client_secret: 'not-the-client-secret' })
  t.equal(wrong.success, true, wrong.message)
  const before = await counts(app)
  const refused = async (what: string, res: LightMyRequestResponse, message: string | RegExp) => {
    t.equal(res.statusCode, 200, what)
    t.equal(res.json().success, false, `${what}: refused`)
    t.match(res.json().message, message, what)
    t.equal(cookieOf(res, 'session'), undefined, `${what}: no session`)
    t.same(await counts(app), before, `${what}: no user, no link`)
  }

  await refused('a wrong client secret', await signIn(app, 'acme-wrong', 'alice'), /^Acme wrong secret sign-in failed: .*(client authentication failed|invalid_client)/i)

  const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  proxy.tamper = (payload) => ({ payload, key: attacker })
  await refused('an ID token signed with another key', await signIn(app, 'acme-forged', 'alice'), 'Acme via proxy sign-in failed: the ID token\'s signature does not match the provider\'s published keys')
  proxy.tamper = (payload) => ({ payload: { ...payload, aud: 'another-client' } })
  await refused('an ID token for another audience', await signIn(app, 'acme-forged', 'alice'), 'Acme via proxy sign-in failed: the ID token was issued to another client')
  proxy.tamper = (payload) => ({ payload: { ...payload, nonce: 'a-nonce-of-another-sign-in' } })
  await refused('a wrong nonce', await signIn(app, 'acme-forged', 'alice'), 'Acme via proxy sign-in failed: the ID token belongs to another sign-in (nonce mismatch)')
  proxy.tamper = (payload) => ({ payload: { ...payload, exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 } })
  await refused('an expired ID token', await signIn(app, 'acme-forged', 'alice'), 'Acme via proxy sign-in failed: the ID token has expired or is not yet valid')
  proxy.tamper = undefined
  const genuine = await signIn(app, 'acme-forged', 'alice')
  t.equal(genuine.json().success, true, 'the same path passes once nobody tampers with it')
  await app.db.deleteFrom('custom_oauth_links').execute()
  await app.db.deleteFrom('users').where('id', '=', genuine.json().data.id).execute()

  // The state: single use, tied to this browser, issued for this provider's flow.
  const flow = await start(app, 'acme')
  const back = await authorizeAt(flow.url, 'alice')
  const first = await callback(app, 'acme', back, flow.cookie)
  t.equal(first.json().success, true, 'the flow itself is fine')
  const aliceId = first.json().data.id as number
  await app.db.deleteFrom('custom_oauth_links').execute()
  await app.db.deleteFrom('users').where('id', '=', aliceId).execute()
  await refused('a replayed state and code', await callback(app, 'acme', back, flow.cookie), 'The sign-in request is invalid or has expired; please start again')

  const flowA = await start(app, 'acme')
  const flowB = await start(app, 'acme')
  const backA = await authorizeAt(flowA.url, 'alice')
  await refused('a state that is not this browser\'s', await callback(app, 'acme', backA, flowB.cookie), 'The sign-in request is invalid or has expired; please start again')

  const github = await app.inject('/api/oauth/state')
  const githubState = github.json().data as string
  const foreign = new URL(back)
  foreign.searchParams.set('state', githubState)
  await refused('a state not issued for this provider', await callback(app, 'acme', foreign, cookieOf(github, 'oauth_state')!), 'The sign-in request is invalid or has expired; please start again')
  const other = await start(app, 'acme-forged')
  const otherBack = await authorizeAt(other.url, 'alice')
  await refused('another provider\'s state', await callback(app, 'acme', otherBack, other.cookie), 'The sign-in request is invalid or has expired; please start again')

  const expiring = await start(app, 'acme')
  const expiringBack = await authorizeAt(expiring.url, 'alice')
  await app.redis.expire(`oauth:state:${expiringBack.searchParams.get('state') ?? ''}`, 0)
  await refused('an expired flow', await callback(app, 'acme', expiringBack, expiring.cookie), 'The sign-in request is invalid or has expired; please start again')

  const mixUp = await start(app, 'acme')
  const mixUpBack = await authorizeAt(mixUp.url, 'alice')
  mixUpBack.searchParams.set('iss', 'http://another-issuer.example')
  await refused('an answer naming another issuer (RFC 9207)', await callback(app, 'acme', mixUpBack, mixUp.cookie), 'Acme SSO sign-in failed: the answer comes from another issuer')

  const denied = await start(app, 'acme')
  const cancelled = new URL(`${CONSOLE}/oauth/acme`)
  cancelled.searchParams.set('error', 'access_denied')
  cancelled.searchParams.set('error_description', 'End-User aborted interaction')
  cancelled.searchParams.set('state', new URL(denied.url).searchParams.get('state') ?? '')
  await refused('a cancelled authorization', await callback(app, 'acme', cancelled, denied.cookie), 'Acme SSO sign-in failed: End-User aborted interaction')

  const pending = await start(app, 'acme')
  const pendingBack = await authorizeAt(pending.url, 'alice')
  await app.inject({ method: 'PUT', url: `/api/custom-oauth-provider/${provider.id}`, headers: root.headers, payload: { enabled: false } })
  await refused('a disabled provider', await callback(app, 'acme', pendingBack, pending.cookie), 'The administrator has not enabled sign-in and registration through Acme SSO')
  const startDisabled = (await app.inject({ url: '/api/oauth/acme/authorize', headers: EN })).json()
  t.same(startDisabled, { success: false, message: 'The administrator has not enabled sign-in and registration through Acme SSO' }, 'nor does one start')
  t.same((await app.inject({ url: '/api/oauth/nobody/authorize', headers: EN })).json(), { success: false, message: 'This sign-in provider does not exist' })
  t.equal((await app.inject({ url: '/api/oauth/github?code=x&state=y', headers: EN })).json().message, 'The administrator has not enabled sign-in and registration through GitHub', 'the built-in routes still win over /:slug')
})

t.test('a plain OAuth 2.0 provider signs in through its userinfo endpoint with the claim mapping', async (t) => {
  const { app, root, discovered } = await setup(t)
  const created = await createProvider(app, root, {
    name: 'Plain OAuth',
    slug: 'plain',
    kind: 'oauth2',
    enabled: true,
    authorization_endpoint: discovered.authorization_endpoint,
    token_endpoint: discovered.token_endpoint,
    user_info_endpoint: discovered.user_info_endpoint,
    // The provider's userinfo answers only for an `openid` token.
    scopes: 'openid profile email',
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    user_id_field: 'sub',
    username_field: 'preferred_username',
    display_name_field: 'name'
  })
  t.equal(created.success, true, created.message)
  const res = await signIn(app, 'plain', 'dave')
  t.equal(res.json().success, true, res.json().message)
  t.match(res.json().data, { username: 'dave', display_name: 'Dave' })
  const link = await app.db.selectFrom('custom_oauth_links').selectAll().where('provider_id', '=', created.data.id).executeTakeFirstOrThrow()
  t.equal(link.subject, 'dave')
  t.equal((await findUserById(app.db, link.user_id))?.username, 'dave')
})
