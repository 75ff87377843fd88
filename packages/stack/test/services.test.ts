import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { createServiceEnv, freePort, until } from '@modelgate/testing'
import t from 'tap'

const require = createRequire(import.meta.url)
const SERVICES = [
  { name: 'gateway', portVar: 'PORT' },
  { name: 'control-plane', portVar: 'CONTROL_PLANE_PORT' },
  { name: 'billing-worker', portVar: 'BILLING_WORKER_PORT' }
] as const

function run (name: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [require.resolve(`@modelgate/${name}/server`)], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const exit = new Promise<{ code: number | null, output: string }>((resolve) => {
    child.on('exit', (code) => resolve({ code, output }))
  })
  return { child, exit }
}

for (const svc of SERVICES) {
  t.test(`${svc.name} refuses to start with a bad DATABASE_URL and names it`, async (t) => {
    const env = await createServiceEnv(t)
    const { exit } = run(svc.name, { ...env, DATABASE_URL: 'mysql://nope', [svc.portVar]: String(await freePort()) })
    const { code, output } = await exit
    t.equal(code, 1)
    t.match(output, /DATABASE_URL must be a postgres:\/\/ connection URL/)
    t.notMatch(output, /REDIS_URL/, 'only the bad variable is named')
  })

  t.test(`${svc.name} answers /healthz and /readyz, then stops cleanly on SIGTERM`, async (t) => {
    const env = await createServiceEnv(t)
    const port = await freePort()
    const { child, exit } = run(svc.name, { ...env, [svc.portVar]: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' })
    t.teardown(() => { child.kill('SIGKILL') })
    // A generous deadline: a loaded machine starts a service in seconds, an idle one in under one.
    const ready = await until(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, 60_000, 100)
    t.ok(ready, 'ready')
    t.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200)
    child.kill('SIGTERM')
    const { code, output } = await exit
    t.equal(code, 0, 'exit code 0')
    t.match(output, /"msg":"stopped"/)
  })
}
