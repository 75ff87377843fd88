import t from 'tap'
import { ConfigError, loadBillingWorkerConfig, loadControlPlaneConfig, loadGatewayConfig, loadStackConfig, placeholderSecret } from '../src/index.js'

const good = {
  DATABASE_URL: 'postgres://u:p@db:5432/modelgate',
  REDIS_URL: 'redis://cache:6379',
  CRYPTO_SECRET: 'cR7x-q2Lw9vT4nK8pZ1mY6bH3sF0gJ5d',
  SESSION_SECRET: 'sE4m-Pz8Qa1Wk6Nt3Xv9Bc2Ry5Lh0Jd7'
}

t.test('applies defaults and converts types', async (t) => {
  const c = loadGatewayConfig(good)
  t.equal(c.PORT, 3000)
  t.equal(c.CONTROL_PLANE_URL, 'http://127.0.0.1:3001')
  t.equal(c.LOG_LEVEL, 'info')
  t.equal(c.MIGRATE_ON_START, true)
  t.ok(Object.isFrozen(c))
  const d = loadGatewayConfig({ ...good, PORT: '8080', MIGRATE_ON_START: 'false', LOG_LEVEL: 'debug' })
  t.equal(d.PORT, 8080)
  t.equal(d.MIGRATE_ON_START, false)
  t.equal(d.LOG_LEVEL, 'debug')
})

t.test('an empty variable counts as unset', async (t) => {
  t.equal(loadGatewayConfig({ ...good, PORT: '' }).PORT, 3000)
})

t.test('one error names every bad variable', async (t) => {
  const err = t.throws(() => loadControlPlaneConfig({
    DATABASE_URL: 'mysql://db/x',
    PORT: 'irrelevant to this service',
    CONTROL_PLANE_PORT: '70000',
    SESSION_SECRET: 'short',
    LOG_LEVEL: 'chatty'
  })) as ConfigError
  t.type(err, ConfigError)
  t.same([...err.variables].sort(), ['CONTROL_PLANE_PORT', 'CRYPTO_SECRET', 'DATABASE_URL', 'LOG_LEVEL', 'REDIS_URL', 'SESSION_SECRET'])
  t.match(err.message, /^Invalid configuration for control-plane: /)
  t.match(err.message, /DATABASE_URL must be a postgres:\/\/ connection URL \(got "mysql:\/\/db\/x"\)/)
  t.match(err.message, /CONTROL_PLANE_PORT must be a TCP port 1-65535 \(control plane\) \(got "70000"\)/)
  t.match(err.message, /REDIS_URL is required/)
  t.match(err.message, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/)
  t.notMatch(err.message, /(^|; )PORT must/, 'variables of other services are not checked')
  t.match(err.message, /SESSION_SECRET must be at least 32 characters \(signs console sessions\) \(got 5 characters\)/)
  t.notMatch(err.message, 'short', 'a secret is never echoed')
})

t.test('a password inside a bad URL is masked', async (t) => {
  const err = t.throws(() => loadGatewayConfig({ ...good, REDIS_URL: 'http://user:topsecret@cache:6379' })) as ConfigError
  t.match(err.message, 'http://user:***@cache:6379')
  t.notMatch(err.message, 'topsecret')
})

t.test('npm start needs nothing', async (t) => {
  const c = loadStackConfig({})
  t.equal(c.DATABASE_URL, undefined)
  t.equal(c.DATA_DIR, './data')
  t.equal(c.PORT, 3000)
})

t.test('placeholder secrets and passwords stop every service with a message naming the variable', async (t) => {
  const placeholders = [
    ['the deploy/ Secret example', 'CHANGE-ME-openssl-rand-base64-48-CHANGE-ME'],
    ['change-me repeated', 'change-me-change-me-change-me-change-me'],
    ['changeme', 'changemechangemechangemechangeme'],
    ['a placeholder', 'placeholder-placeholder-placeholder'],
    ['one character', 'x'.repeat(40)],
    ['a repeated pattern', 'abc123'.repeat(8)],
    ['a run', '0123456789abcdefghijklmnopqrstuvwxyz'],
    ['a common word and digits', 'secret12345678901234567890123456']
  ] as const
  for (const [what, value] of placeholders) {
    t.ok(placeholderSecret(value), `${what}: a placeholder`)
    for (const [service, load, name] of [
      ['gateway', loadGatewayConfig, 'SESSION_SECRET'],
      ['control-plane', loadControlPlaneConfig, 'CRYPTO_SECRET'],
      ['billing-worker', loadBillingWorkerConfig, 'CRYPTO_SECRET']
    ] as const) {
      const err = t.throws(() => load({ ...good, [name]: value }), `${service}: ${name} ${what} refused`) as ConfigError
      t.type(err, ConfigError)
      t.same(err.variables, [name])
      t.match(err.message, new RegExp(`^Invalid configuration for ${service}: ${name} is a placeholder, not a secret \\(.+\\): set a random value of your own, e\\.g\\. from \`openssl rand -base64 48\``))
      t.notOk(err.message.includes(value), 'the value is not echoed')
    }
  }
  t.throws(() => loadStackConfig({ SESSION_SECRET: 'change-me-change-me-change-me-change-me' }), ConfigError, 'npm start refuses one too')

  for (const password of ['changeme', 'CHANGE-ME-root', '12345678', 'password1', 'aaaaaaaa', 'abababab']) {
    const err = t.throws(() => loadControlPlaneConfig({ ...good, INITIAL_ROOT_PASSWORD: password })) as ConfigError
    t.same(err.variables, ['INITIAL_ROOT_PASSWORD'], `INITIAL_ROOT_PASSWORD ${password.length} characters refused`)
    t.match(err.message, /INITIAL_ROOT_PASSWORD is a placeholder, not a secret .*`openssl rand -base64 15`/)
    t.notOk(err.message.includes(password), 'the password is not echoed')
  }

  for (const value of ['test-session-secret-0123456789abcdef', good.CRYPTO_SECRET, 'q3X0m9KpV7yL2aWc5Ns8Rt1Hd4Gf6Jb0Zu3Ee7Oi']) {
    t.equal(placeholderSecret(value), undefined, 'a real-looking secret passes')
    t.equal(loadGatewayConfig({ ...good, SESSION_SECRET: value }).SESSION_SECRET, value)
  }
  t.equal(loadControlPlaneConfig({ ...good, INITIAL_ROOT_PASSWORD: 'Init1al-Passw0rd' }).INITIAL_ROOT_PASSWORD, 'Init1al-Passw0rd', 'a chosen password passes')
  t.equal(loadControlPlaneConfig({ ...good, INITIAL_ROOT_PASSWORD: '123456' }).INITIAL_ROOT_PASSWORD, '123456', 'the well-known default is taken as it is (flagged by the control plane)')
  t.same((t.throws(() => loadControlPlaneConfig({ ...good, INITIAL_ROOT_PASSWORD: '1234567' })) as ConfigError).variables, ['INITIAL_ROOT_PASSWORD'], 'only that exact default is let through')
  t.equal(loadStackConfig({ FIRST_RUN_SETUP: 'true' }).FIRST_RUN_SETUP, true, 'npm start\'s first-run setup switch')
  t.equal(loadStackConfig({}).FIRST_RUN_SETUP, false)
})
