import t from 'tap'
import { ConfigError, loadControlPlaneConfig, loadGatewayConfig, loadStackConfig } from '../src/index.js'

const good = {
  DATABASE_URL: 'postgres://u:p@db:5432/modelgate',
  REDIS_URL: 'redis://cache:6379',
  CRYPTO_SECRET: 'c'.repeat(32),
  SESSION_SECRET: 's'.repeat(32)
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
