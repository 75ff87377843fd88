import { Writable } from 'node:stream'
import { loadControlPlaneConfig } from '@modelgate/config'
import { loggerOptions } from '@modelgate/logger'
import { fastifyOptions } from '@modelgate/service'
import { createServiceEnv } from '@modelgate/testing'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import controlPlane from '../src/app.js'
import { login, ROOT } from './helpers.js'

/**
 * Names that forge a log line, colour a terminal, or run as a spreadsheet formula; each fits a
 * redemption code name (20 characters), the shortest name field.
 */
const INJECTED = [
  '\n{"level":50,"f":1}',
  '\r\n{"level":60,"f":1}',
  '\u001b[31mred\u001b[0m',
  '=HYPERLINK("//x")',
  "+cmd|' /C calc'!A0"
]

/** Everything written to `lines`, split on newlines as a log collector splits it. */
function capture (): { stream: Writable, text: () => string } {
  const chunks: string[] = []
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { chunks.push(chunk.toString('utf8')); done() } })
  return { stream, text: () => chunks.join('') }
}

function checkLines (t: Test, text: string, what: string): Array<Record<string, unknown>> {
  const lines = text.split('\n')
  t.equal(lines.pop(), '', `${what}: the output ends with a newline`)
  const events: Array<Record<string, unknown>> = []
  for (const line of lines) {
    try {
      events.push(JSON.parse(line) as Record<string, unknown>)
    } catch {
      t.fail(`${what}: a line is not one JSON event: ${JSON.stringify(line.slice(0, 200))}`)
    }
  }
  t.notOk(text.includes('\u001b'), `${what}: no raw escape character reaches the terminal`)
  t.notOk(/\r/.test(text), `${what}: no raw carriage return`)
  t.same(events.filter((e) => e.f === 1), [], `${what}: no forged event`)
  return events
}

t.test('SEC-31 log injection: user-set names never forge a log line or reach a terminal as escapes', async (t) => {
  await t.test('the services\' logger writes each event, names and messages included, as one JSON line', async (t) => {
    const out = capture()
    // The logger each service builds (fastifyOptions), writing to `out`.
    const log = Fastify({ ...fastifyOptions('control-plane', 'trace', { trustRequestId: false }), logger: { ...loggerOptions({ service: 'control-plane', level: 'trace' }), stream: out.stream } }).log
    for (const name of INJECTED) {
      log.warn({ user: name, token: { name } }, `token ${name} refused`)
      log.error(new Error(`bad name ${name}`))
    }
    const events = checkLines(t, out.text(), 'logger')
    t.equal(events.length, INJECTED.length * 2, 'one line per event')
    t.same(events.filter((e) => e.level === 40).map((e) => e.user), INJECTED, 'the names survive intact as JSON strings')
  })

  await t.test('the control plane at trace level, given injected user, token and redemption names', async (t) => {
    const out = capture()
    const base = fastifyOptions('control-plane', 'trace', { trustRequestId: true })
    const app = Fastify({ ...base, logger: { ...loggerOptions({ service: 'control-plane', level: 'trace' }), stream: out.stream } })
    await app.register(controlPlane, { config: loadControlPlaneConfig(await createServiceEnv(t)) })
    await app.ready()
    t.teardown(() => app.close())
    const root = await login(app, ROOT.username, ROOT.password)
    for (const name of INJECTED) {
      const post = async (url: string, payload: Record<string, unknown>) => (await app.inject({ method: 'POST', url, headers: root.headers, payload })).json<{ success: boolean, message: string }>()
      const token = await post('/api/token/', { name, remain_quota: 1000 })
      t.equal(token.success, true, token.message)
      const code = await post('/api/redemption/', { name, quota: 1000, count: 1 })
      t.equal(code.success, true, code.message)
      // Names also arrive where they are refused or searched for.
      await app.inject({ method: 'GET', url: `/api/token/search?keyword=${encodeURIComponent(name)}`, headers: root.headers })
      await app.inject({ method: 'POST', url: '/api/user/login', payload: { username: name, password: 'wrong-password' } })
      await app.inject({ method: 'PUT', url: '/api/user/self', headers: root.headers, payload: { display_name: name } })
    }
    // A raw request line the client did not percent-encode.
    await app.inject({ method: 'GET', url: '/api/token/search?keyword=%0a{"level":50}%1b[31m', headers: root.headers })
    const events = checkLines(t, out.text(), 'control plane')
    t.ok(events.length > INJECTED.length * 5, `${events.length} events, each on its own line`)
    t.same(events.filter((e) => e.level === 50), [], 'no error event at all: none was forged')
  })
})
