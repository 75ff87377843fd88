import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import type { Teardown } from './resources.js'
import { freePort } from './resources.js'
import { until } from './wait.js'

const run = promisify(execFile)

/** A Redis Cluster of its own on 127.0.0.1: masters, each with one replica. */
export interface TestRedisCluster {
  /** Every node's address (masters and replicas), the first a master. */
  readonly nodes: ReadonlyArray<{ host: string, port: number }>
  /** A URL naming one node (any node lets a cluster client find the others). */
  readonly url: string
  /** Ports of the nodes serving slots now. */
  masters: () => Promise<number[]>
  /** Commands processed and CPU used (user + sys, seconds) by each master, by port. */
  masterStats: () => Promise<Map<number, { commands: number, cpu: number }>>
  /**
   * Kills the master serving `slot` (SIGKILL, as a crashed host), waits until its replica has
   * taken its slots and the cluster is whole again; returns the killed port.
   */
  failover: (slot: number) => Promise<number>
}

async function tcpOpen (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => resolve(false))
  })
}

async function ask<T> (port: number, work: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 })
  try {
    await r.connect()
    return await work(r)
  } finally {
    r.disconnect()
  }
}

const infoField = (info: string, name: string): string | undefined => new RegExp(`^${name}:(.*?)\\s*$`, 'm').exec(info)?.[1]

/** Slot ranges by the master port serving them, from CLUSTER SHARDS-like CLUSTER SLOTS. */
async function slotOwners (port: number): Promise<Array<{ from: number, to: number, port: number }>> {
  const slots = await ask(port, async (r) => await r.call('CLUSTER', 'SLOTS') as Array<[number, number, [string, number, ...unknown[]], ...unknown[]]>)
  return slots.map(([from, to, master]) => ({ from, to, port: Number(master[1]) }))
}

/**
 * Starts `masters` masters (3 by default) and as many replicas with `redis-server
 * --cluster-enabled yes`, joins them with `redis-cli --cluster create --cluster-replicas 1`, and
 * waits until every node sees the cluster whole and every replica in sync. Stopped at teardown.
 * A short node timeout (1 s) makes a failover take a few seconds.
 */
export async function startRedisCluster (t: Teardown, opts: { masters?: number } = {}): Promise<TestRedisCluster> {
  const count = 2 * (opts.masters ?? 3)
  const dir = mkdtempSync(join(tmpdir(), 'mg-redis-cluster-'))
  const children = new Map<number, ChildProcess>()
  const stop = async (port: number): Promise<void> => {
    const c = children.get(port)
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return
    const exited = new Promise((resolve) => c.once('exit', resolve))
    c.kill('SIGKILL')
    await exited
  }
  t.teardown(async () => {
    await Promise.all([...children.keys()].map(stop))
    rmSync(dir, { recursive: true, force: true })
  })
  const ports: number[] = []
  while (ports.length < count) {
    const port = await freePort()
    const bus = await freePort()
    if (ports.includes(port) || ports.includes(bus) || port === bus) continue
    ports.push(port)
    const child = spawn('redis-server', [
      '--bind', '127.0.0.1', '--port', String(port), '--cluster-enabled', 'yes', '--cluster-port', String(bus),
      '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '1000', '--dir', dir,
      '--save', '', '--appendonly', 'no', '--loglevel', 'warning'
    ], { stdio: 'ignore' })
    child.once('error', () => {})
    children.set(port, child)
  }
  for (const port of ports) {
    if (!await until(async () => await tcpOpen(port), 10_000)) throw new Error(`redis-server on ${port} did not start (is redis-server installed?)`)
  }
  await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 30_000 })
  const whole = async (alive: number[]): Promise<boolean> => {
    for (const port of alive) {
      const state = await ask(port, async (r) => await r.call('CLUSTER', 'INFO') as string)
      if (infoField(state, 'cluster_state') !== 'ok' || infoField(state, 'cluster_slots_ok') !== '16384') return false
      const replication = await ask(port, async (r) => await r.info('replication'))
      if (infoField(replication, 'role') === 'slave' && infoField(replication, 'master_link_status') !== 'up') return false
    }
    return true
  }
  const alive = (): number[] => ports.filter((p) => { const c = children.get(p)!; return c.exitCode === null && c.signalCode === null })
  if (!await until(async () => await whole(alive()), 30_000, 200)) throw new Error('the Redis cluster did not come together')
  const masters = async (): Promise<number[]> => [...new Set((await slotOwners(alive()[0]!)).map((s) => s.port))].sort((a, b) => a - b)
  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    url: `redis://127.0.0.1:${(await masters())[0]!}`,
    masters,
    masterStats: async () => {
      const out = new Map<number, { commands: number, cpu: number }>()
      for (const port of await masters()) {
        const info = await ask(port, async (r) => await r.info())
        const commands = Number(infoField(info, 'total_commands_processed') ?? 0)
        const cpu = Number(infoField(info, 'used_cpu_user') ?? 0) + Number(infoField(info, 'used_cpu_sys') ?? 0)
        out.set(port, { commands, cpu })
      }
      return out
    },
    failover: async (slot: number) => {
      const owner = (await slotOwners(alive()[0]!)).find((s) => s.from <= slot && slot <= s.to)
      if (owner === undefined) throw new Error(`no master serves slot ${slot}`)
      await stop(owner.port)
      const moved = async (): Promise<boolean> => {
        const now = (await slotOwners(alive()[0]!)).find((s) => s.from <= slot && slot <= s.to)
        return now !== undefined && now.port !== owner.port && await whole(alive())
      }
      if (!await until(moved, 30_000, 200)) throw new Error(`no replica took slot ${slot} over`)
      return owner.port
    }
  }
}
