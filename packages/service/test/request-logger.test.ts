import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
import { fastifyOptions } from '../src/index.js'

function capture (level: string) {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done() } })
  const options = fastifyOptions('test', level, { trustRequestId: false })
  const app = Fastify({ ...options, logger: { ...options.logger as object, stream } })
  let children = 0
  const original = app.log.child
  app.log.child = function (this: unknown, ...args: Parameters<typeof original>) { children++; return original.apply(this, args) } as typeof original
  app.get('/quiet', async (req) => { req.log.debug({ authorization: 'Bearer sk-secret' }, 'not at this level'); return 'ok' })
  app.get('/loud', async (req) => {
    req.log.warn({ authorization: 'Bearer sk-secret', key: 'k' }, 'fetching https://x.test/?key=sk-secret')
    req.log.child({ step: 'inner' }).error('inner step')
    return 'ok'
  })
  return { app, lines, children: () => children }
}

t.test('request loggers are made only when a request logs, and keep the request id and redaction', async (t) => {
  const { app, lines, children } = capture('warn')
  t.teardown(() => app.close())
  // Fastify's own request lines are at info, below this level too.
  for (let i = 0; i < 20; i++) t.equal((await app.inject({ url: '/quiet' })).statusCode, 200)
  t.equal(children(), 0, 'twenty requests logging below the level made no child logger')
  t.equal(lines.length, 0)
  const res = await app.inject({ url: '/loud' })
  t.equal(res.statusCode, 200)
  t.equal(children(), 2, 'a logger for the request that logged, and the child it asked for')
  t.equal(lines.length, 2)
  const [warn, inner] = lines
  t.match(warn, { level: 40, service: 'test', authorization: '[redacted]', key: '[redacted]', msg: 'fetching https://x.test/?key=[redacted]' })
  t.type(warn!['reqId'], 'string')
  t.match(inner, { level: 50, step: 'inner', reqId: warn!['reqId'], msg: 'inner step' })
  t.notMatch(JSON.stringify(lines), /sk-secret/)
})

t.test('at a level that includes it, a debug line carries the request id', async (t) => {
  const { app, lines } = capture('debug')
  t.teardown(() => app.close())
  await app.inject({ url: '/quiet' })
  const line = lines.find((l) => l['msg'] === 'not at this level')
  t.match(line, { level: 20, authorization: '[redacted]' })
  t.type(line?.['reqId'], 'string')
  t.ok(lines.some((l) => l['msg'] === 'incoming request' && l['reqId'] === line?.['reqId']), 'Fastify\'s request lines carry the same id')
})

t.test('at info (the default) requests leave no access lines; at debug they do', async (t) => {
  for (const [level, expected] of [['info', false], ['debug', true]] as const) {
    const { app, lines } = capture(level)
    t.teardown(() => app.close())
    await app.inject({ url: '/quiet' })
    t.equal(lines.some((l) => l['msg'] === 'incoming request' || l['msg'] === 'request completed'), expected, `${level}: access lines ${expected ? 'written' : 'not written'}`)
  }
})
