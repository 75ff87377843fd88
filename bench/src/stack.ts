import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { SERVICE_NODE_FLAGS } from '@modelgate/config'
import { USAGE_QUEUE } from '@modelgate/contracts'
import { createDb, type Database, type Kysely, sql } from '@modelgate/db'
import { bullConnection } from '@modelgate/service'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { type Child, Children, freePort, waitReady } from './procs.js'

const require = createRequire(import.meta.url)
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

/** Everything one bench run started, with the clients the bench itself uses. */
export interface Stack {
  mockUrl: string
  bareUrl: string
  gatewayUrl: string
  /** The gateway's Prometheus endpoint. */
  gatewayMetricsUrl: string
  gateway: Child
  worker: Child
  controlPlane: Child
  /** The bench's own connection to the run's database. */
  db: Kysely<Database>
  redis: Redis
  /** The usage queue as the gateway writes it. */
  usageQueue: Queue
  databaseName: string
  redisPrefix: string
}

export interface StackOptions {
  postgresUrl: string
  redisUrl: string
  /** Extra Node flags for the gateway and the billing worker (--cpu-prof). */
  profileExecArgv: string[]
  /** The services' LOG_LEVEL. */
  logLevel: string
  /** The node binary of every child ('' for the bench's own). */
  node: string
  /** Extra Node flags for the three services. */
  nodeFlags: string[]
  log: (line: string) => void
}

async function forkWithPort (children: Children, name: string, script: string, args: string[] = []): Promise<{ child: Child, port: number }> {
  const child = children.forkTs(name, script, args)
  const [msg] = await Promise.race([
    once(child.proc, 'message') as Promise<[{ port: number }]>,
    once(child.proc, 'exit').then(() => { throw new Error(`${name} exited at start:\n${Children.tail(child)}`) })
  ])
  return { child, port: msg.port }
}

/** The run's resources, released by `release` whatever happened. */
export class StackResources {
  readonly children: Children
  readonly #opts: StackOptions
  readonly databaseName = `modelgate_bench_${Date.now()}`
  readonly redisPrefix = `bench-${Date.now()}:`
  /** performance.now() when the gateway was spawned (its profile starts then). */
  gatewaySpawnedAt = 0
  #admin: Kysely<Database> | undefined
  #databaseCreated = false
  #released = false
  #starting: Promise<Stack> | undefined
  #stack: Partial<Stack> = {}

  constructor (opts: StackOptions, logDir: string) {
    this.#opts = opts
    this.children = new Children(logDir, opts.node)
  }

  get databaseUrl (): string {
    const u = new URL(this.#opts.postgresUrl)
    u.pathname = `/${this.databaseName}`
    return u.toString()
  }

  start (): Promise<Stack> {
    this.#starting = this.#start()
    return this.#starting
  }

  /** Throws once `release` was called, so a start interrupted by Ctrl-C creates nothing more. */
  #checkpoint (): void {
    if (this.#released) throw new Error('stopped during start')
  }

  #alive (name: string): () => boolean {
    return () => !this.#released && this.children.alive(name)
  }

  async #start (): Promise<Stack> {
    const { log } = this.#opts
    this.#admin = createDb(this.#opts.postgresUrl, { max: 1, applicationName: 'modelgate-bench' })
    await sql`create database ${sql.id(this.databaseName)}`.execute(this.#admin)
    this.#databaseCreated = true
    this.#checkpoint()
    log(`database ${this.databaseName}, Redis prefix ${this.redisPrefix}`)

    const mock = await forkWithPort(this.children, 'mock-upstream', here('./mock-upstream.ts'))
    const mockUrl = `http://127.0.0.1:${mock.port}`
    const bare = await forkWithPort(this.children, 'bare-relay', here('./bare-relay.ts'), [mockUrl])
    this.#checkpoint()

    // Every port a service listens on is a free one, metrics included, so the bench runs beside
    // a running `npm start` (which holds the default ports).
    const [gatewayPort, controlPlanePort, workerPort] = [await freePort(), await freePort(), await freePort()]
    const metricsPorts = { gateway: await freePort(), controlPlane: await freePort(), worker: await freePort() }
    const env = {
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.#opts.redisUrl,
      REDIS_KEY_PREFIX: this.redisPrefix,
      SESSION_SECRET: randomBytes(32).toString('hex'),
      CRYPTO_SECRET: randomBytes(32).toString('hex'),
      // The seed signs in as root / 123456.
      INITIAL_ROOT_PASSWORD: '123456',
      HOST: '127.0.0.1',
      LOG_LEVEL: this.#opts.logLevel,
      SHUTDOWN_GRACE_MS: '10000',
      PORT: String(gatewayPort),
      CONTROL_PLANE_PORT: String(controlPlanePort),
      BILLING_WORKER_PORT: String(workerPort),
      CONTROL_PLANE_URL: `http://127.0.0.1:${controlPlanePort}`,
      // Every load the bench makes comes from 127.0.0.1 and stands for many clients: the slow
      // streams alone open 5,000 connections at once, past the per-address default of 1,000.
      GATEWAY_MAX_CONNECTIONS_PER_IP: '1000000'
    }
    // The control plane migrates the fresh database first; the others then find nothing to do.
    // The flags the services run with everywhere, then the run's own (a later V8 flag wins).
    const flags = [...SERVICE_NODE_FLAGS, ...this.#opts.nodeFlags]
    const controlPlane = this.children.spawnNode('control-plane', require.resolve('@modelgate/control-plane/server'), { ...env, METRICS_PORT: String(metricsPorts.controlPlane) }, flags)
    await waitReady(`http://127.0.0.1:${controlPlanePort}/readyz`, 120_000, this.#alive('control-plane'))
      .catch((err: unknown) => { throw new Error(`${(err as Error).message}\n${Children.tail(controlPlane)}`) })
    this.#checkpoint()
    const worker = this.children.spawnNode('billing-worker', require.resolve('@modelgate/billing-worker/server'), { ...env, METRICS_PORT: String(metricsPorts.worker) }, [...flags, ...this.#opts.profileExecArgv])
    this.gatewaySpawnedAt = performance.now()
    const gateway = this.children.spawnNode('gateway', require.resolve('@modelgate/gateway/server'), { ...env, METRICS_PORT: String(metricsPorts.gateway) }, [...flags, ...this.#opts.profileExecArgv])
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`
    await Promise.all([
      waitReady(`http://127.0.0.1:${workerPort}/readyz`, 60_000, this.#alive('billing-worker'))
        .catch((err: unknown) => { throw new Error(`${(err as Error).message}\n${Children.tail(worker)}`) }),
      waitReady(`${gatewayUrl}/readyz`, 60_000, this.#alive('gateway'))
        .catch((err: unknown) => { throw new Error(`${(err as Error).message}\n${Children.tail(gateway)}`) })
    ])

    this.#checkpoint()
    const redis = new Redis(this.#opts.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 })
    await redis.connect()
    const stack: Stack = {
      mockUrl,
      bareUrl: `http://127.0.0.1:${bare.port}`,
      gatewayUrl,
      gatewayMetricsUrl: `http://127.0.0.1:${metricsPorts.gateway}/metrics`,
      gateway,
      worker,
      controlPlane,
      db: createDb(this.databaseUrl, { max: 4, applicationName: 'modelgate-bench' }),
      redis,
      usageQueue: new Queue(USAGE_QUEUE, { connection: bullConnection(this.#opts.redisUrl), prefix: `${this.redisPrefix}bull` }),
      databaseName: this.databaseName,
      redisPrefix: this.redisPrefix
    }
    this.#stack = stack
    return stack
  }

  /** Stops the gateway, then the worker (SIGTERM: in-flight work finishes, --cpu-prof writes its file). */
  async stopProfiled (): Promise<void> {
    if (this.#stack.gateway !== undefined) await Children.stop(this.#stack.gateway, 20_000)
    if (this.#stack.worker !== undefined) await Children.stop(this.#stack.worker, 20_000)
  }

  /** Stops every process, drops the database and deletes the run's Redis keys. Never throws. */
  async release (): Promise<void> {
    if (this.#released) return
    this.#released = true
    // An interrupted start stops at its next checkpoint; only then is everything it made known.
    await this.#starting?.catch(() => {})
    const { log } = this.#opts
    const quietly = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await fn()
      } catch (err) {
        log(`cleanup: ${what} failed: ${(err as Error).message}`)
      }
    }
    await quietly('stopping processes', async () => { await this.children.stopAll(['gateway', 'bare-relay', 'billing-worker', 'control-plane', 'mock-upstream'], 15_000) })
    const s = this.#stack
    await quietly('closing the queue', async () => { await s.usageQueue?.close() })
    await quietly('closing the database client', async () => { await s.db?.destroy() })
    if (s.redis !== undefined) {
      const redis = s.redis
      await quietly('deleting Redis keys', async () => {
        let cursor = '0'
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${this.redisPrefix}*`, 'COUNT', 1000)
          cursor = next
          if (keys.length > 0) await redis.unlink(...keys)
        } while (cursor !== '0')
      })
      redis.disconnect()
    }
    const admin = this.#admin
    if (admin !== undefined) {
      if (this.#databaseCreated) await quietly(`dropping ${this.databaseName}`, async () => { await sql`drop database if exists ${sql.id(this.databaseName)} with (force)`.execute(admin) })
      await quietly('closing the admin client', async () => { await admin.destroy() })
    }
  }
}
