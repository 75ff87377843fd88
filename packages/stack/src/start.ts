#!/usr/bin/env node
// `npm start`: the whole system on one machine. Postgres and Redis from DATABASE_URL / REDIS_URL,
// else servers on the standard local ports, else real servers started under ./data; then the
// three services under one supervisor. Ctrl-C stops the services first, the data servers last.
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline'
import { loadStackConfig, type StackConfig } from '@modelgate/config'
import { sleep } from './net.js'
import { type PostgresHandle, resolvePostgres } from './postgres.js'
import { type RedisHandle, resolveRedis } from './redis.js'
import { resolveSecrets } from './secrets.js'
import { Supervisor } from './supervisor.js'

const require = createRequire(import.meta.url)
const log = (line: string) => process.stdout.write(`stack          | ${line}\n`)
/** The root password of a local start on an empty database (flagged, warned about until changed). */
const DEFAULT_ROOT_PASSWORD = '123456'

const USAGE = `Usage: npm start [-- --help]

Runs the whole system on this machine: Postgres and Redis, then the gateway, the control plane
and the billing worker under one supervisor. Ctrl-C stops everything.

Read from the environment (or .env):
  DATABASE_URL         Postgres to use; unset: one on LOCAL_POSTGRES_PORT, else one started under DATA_DIR
  REDIS_URL            Redis to use; unset: one on LOCAL_REDIS_PORT, else one started under DATA_DIR
  DATA_DIR             where started servers and generated secrets live (default ./data)
  PORT                 gateway port (default 3000)
  CONTROL_PLANE_PORT   control plane port (default 3001)
  BILLING_WORKER_PORT  billing worker health port (default 3002)
  LOCAL_POSTGRES_PORT  local Postgres port (default 5432)
  LOCAL_REDIS_PORT     local Redis port (default 6379)
  SESSION_SECRET, CRYPTO_SECRET  generated under DATA_DIR when unset
  INITIAL_ROOT_PASSWORD  first password of root on an empty database (default 123456, flagged until changed)
  FIRST_RUN_SETUP      true: no root / 123456 on an empty database; the console asks for the first account
  LOG_LEVEL            fatal, error, warn, info, debug, trace or silent (default info)
Every service setting in docs/configuration.md is passed on to the services.

Options:
  -h, --help           print this help and exit
`
{
  const args = process.argv.slice(2)
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  if (args.length > 0) {
    process.stderr.write(`npm start: unknown argument ${args[0]}\n\n${USAGE}`)
    process.exit(2)
  }
}

let config: Readonly<StackConfig>
try {
  config = loadStackConfig()
} catch (err) {
  process.stderr.write(`npm start: ${(err as Error).message}\n`)
  process.exit(1)
}

let pgHandle: PostgresHandle | undefined
let redisHandle: RedisHandle | undefined
let supervisor: Supervisor | undefined
let stopping = false
let stoppingSince = 0

async function shutdown (code: number): Promise<void> {
  if (stopping) {
    // One Ctrl-C reaches us twice (from the terminal and forwarded by npm): only a later one forces.
    if (Date.now() - stoppingSince < 2_000) return
    log('forced stop')
    supervisor?.killAll()
    await redisHandle?.stop()
    await pgHandle?.stop()
    process.exit(1)
  }
  stopping = true
  stoppingSince = Date.now()
  log('stopping (press Ctrl-C again to force)')
  // The gateway lets streams in flight finish for DRAIN_TIMEOUT_MS (default 2 minutes) before
  // cutting and billing them; waiting less would kill it mid-drain. Idle services stop at once.
  const drainMs = Number(process.env['DRAIN_TIMEOUT_MS'] ?? 120_000)
  await supervisor?.stopAll(['gateway', 'control-plane', 'billing-worker'], Math.max(35_000, (Number.isFinite(drainMs) ? drainMs : 120_000) + 20_000))
  await redisHandle?.stop()
  await pgHandle?.stop()
  log('stopped')
  process.exit(code)
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => { void shutdown(0) })

async function waitReady (url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && !stopping) {
    try {
      const res = await fetch(url)
      if (res.ok) return true
    } catch {
      // not listening yet
    }
    await sleep(250)
  }
  return false
}

try {
  pgHandle = await resolvePostgres({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, port: config.LOCAL_POSTGRES_PORT }, log)
  log(`Postgres: ${pgHandle.source}`)
  redisHandle = await resolveRedis({ redisUrl: config.REDIS_URL, dataDir: config.DATA_DIR, port: config.LOCAL_REDIS_PORT }, log)
  log(`Redis: ${redisHandle.source}`)
  const secrets = await resolveSecrets(config.DATA_DIR, { SESSION_SECRET: config.SESSION_SECRET, CRYPTO_SECRET: config.CRYPTO_SECRET })

  const env = {
    DATABASE_URL: pgHandle.url,
    REDIS_URL: redisHandle.url,
    ...secrets,
    PORT: String(config.PORT),
    CONTROL_PLANE_PORT: String(config.CONTROL_PLANE_PORT),
    BILLING_WORKER_PORT: String(config.BILLING_WORKER_PORT),
    CONTROL_PLANE_URL: `http://127.0.0.1:${config.CONTROL_PLANE_PORT}`,
    // A local start keeps the well-known root / 123456 unless asked for the console's first-run
    // setup; an empty value is unset for the control plane.
    INITIAL_ROOT_PASSWORD: config.INITIAL_ROOT_PASSWORD ?? (config.FIRST_RUN_SETUP ? '' : DEFAULT_ROOT_PASSWORD),
    LOG_LEVEL: config.LOG_LEVEL
  }
  supervisor = new Supervisor({ onGiveUp: () => { void shutdown(1) } })
  for (const name of ['control-plane', 'billing-worker', 'gateway']) {
    supervisor.start({ name, script: require.resolve(`@modelgate/${name}/server`), env })
  }

  const base = `http://127.0.0.1:${config.PORT}`
  if (await waitReady(`${base}/readyz`, 120_000) && await waitReady(`${base}/api/status`, 30_000)) {
    log('')
    log(`ready: console and API at http://localhost:${config.PORT}  (OpenAI base URL http://localhost:${config.PORT}/v1)`)
    if (env.INITIAL_ROOT_PASSWORD === DEFAULT_ROOT_PASSWORD) log('first sign-in: root / 123456 (change it in the console)')
    else if (config.INITIAL_ROOT_PASSWORD === undefined) log('first run: open the console to create the super admin (an existing database keeps its accounts)')
    log('type "rs <service>" and Enter to restart one service; Ctrl-C stops everything')
    log('')
  } else if (!stopping) {
    log(`the gateway did not become ready on ${base}/readyz; see the service output above`)
  }

  if (process.stdin.isTTY) {
    createInterface({ input: process.stdin }).on('line', (line) => {
      const [cmd, name] = line.trim().split(/\s+/)
      if ((cmd === 'rs' || cmd === 'restart') && name !== undefined && supervisor?.names.includes(name)) {
        log(`restarting ${name}`)
        void supervisor.restart(name)
      } else if (line.trim() !== '') {
        log(`unknown command; services: ${supervisor?.names.join(', ') ?? ''}`)
      }
    })
  }
} catch (err) {
  process.stderr.write(`npm start: ${(err as Error).message}\n`)
  await shutdown(1)
}
