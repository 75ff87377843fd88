import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import { Redis } from 'ioredis'
import { isListening, sleep } from './net.js'

export interface RedisHandle {
  url: string
  source: 'REDIS_URL' | 'local server' | 'started under data/'
  stop: () => Promise<void>
}

async function ping (url: string): Promise<string | undefined> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000, retryStrategy: () => null })
  redis.on('error', () => {})
  try {
    await redis.connect()
    await redis.ping()
    return undefined
  } catch (err) {
    return (err as Error).message
  } finally {
    redis.disconnect()
  }
}

export const INSTALL_REDIS = 'redis-server was not found. Install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) or set REDIS_URL.'

/**
 * REDIS_URL when set; else a server answering on 127.0.0.1:6379; else `redis-server` from the
 * system, started in its own process group with its files in `dataDir/redis`.
 */
export async function resolveRedis (
  opts: { redisUrl?: string, dataDir: string, port: number },
  log: (line: string) => void
): Promise<RedisHandle> {
  if (opts.redisUrl !== undefined) {
    const error = await ping(opts.redisUrl)
    if (error !== undefined) throw new Error(`REDIS_URL does not answer: ${error}`)
    return { url: opts.redisUrl, source: 'REDIS_URL', stop: async () => {} }
  }
  const standard = 'redis://127.0.0.1:6379'
  if (await isListening('127.0.0.1', 6379) && await ping(standard) === undefined) {
    return { url: standard, source: 'local server', stop: async () => {} }
  }
  const port = opts.port === 6379 && await isListening('127.0.0.1', 6379) ? 6380 : opts.port
  return await startRedisServer(resolve(opts.dataDir, 'redis'), port, log)
}

/** Starts `redis-server` in its own process group, files in `dir`, append-only persistence. */
export async function startRedisServer (dir: string, port: number, log: (line: string) => void): Promise<RedisHandle> {
  await mkdir(dir, { recursive: true })
  log(`starting redis-server on 127.0.0.1:${port} (data in ${dir})`)
  let child: ChildProcess
  try {
    child = await new Promise<ChildProcess>((resolveSpawn, reject) => {
      const c = spawn('redis-server', [
        '--bind', '127.0.0.1', '--port', String(port), '--dir', dir,
        '--appendonly', 'yes', '--save', '', '--protected-mode', 'yes', '--loglevel', 'warning'
      ], { detached: true, stdio: ['ignore', 'ignore', 'inherit'] })
      c.once('spawn', () => resolveSpawn(c))
      c.once('error', reject)
    })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(INSTALL_REDIS, { cause: err })
    throw err
  }
  const url = `redis://127.0.0.1:${port}`
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`)
    if (await ping(url) === undefined) break
    await sleep(100)
  }
  return {
    url,
    source: 'started under data/',
    stop: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await Promise.race([exited, sleep(10_000)])
    }
  }
}
