import type { Redis, RedisOptions } from 'ioredis'

/** Where a service's Redis is: one server, or a master found through Sentinel. */
export type RedisTarget = Pick<RedisOptions, 'host' | 'port' | 'username' | 'password' | 'db' | 'tls' | 'sentinels' | 'name' | 'sentinelUsername' | 'sentinelPassword'>

/**
 * ioredis options from REDIS_URL:
 * - `redis://[user:password@]host[:port][/db]`, `rediss://` for TLS: one server;
 * - `redis+sentinel://[user:password@]host:port[,host:port...]/master-name[/db]`: the master named
 *   `master-name`, asked of those Sentinels (ioredis follows a failover). The user and password are
 *   the master's; `?sentinelPassword=...&sentinelUsername=...` when the Sentinels want their own.
 * Redis Cluster is refused: BullMQ needs every queue key in one hash slot and the quota scripts
 * touch several keys at once.
 */
export function redisOptions (url: string): RedisTarget {
  const sentinel = /^redis\+sentinel:\/\/(?:([^@/]*)@)?([^/?]+)\/([^/?]+)(?:\/(\d+))?\/?(?:\?(.*))?$/.exec(url)
  if (url.startsWith('redis+sentinel:')) {
    if (sentinel === null) throw new Error('REDIS_URL: a Sentinel URL is redis+sentinel://[user:password@]host:port[,host:port...]/master-name[/db]')
    const [, auth, hosts, name, db, query] = sentinel
    const params = new URLSearchParams(query ?? '')
    const sentinels = hosts!.split(',').map((h) => {
      const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h.trim())
      if (m === null) throw new Error(`REDIS_URL: bad Sentinel address ${h}`)
      return { host: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] === undefined ? 26379 : Number(m[2]) }
    })
    return {
      sentinels,
      name: decodeURIComponent(name!),
      ...userinfo(auth),
      db: db === undefined ? 0 : Number(db),
      ...(params.has('sentinelUsername') ? { sentinelUsername: params.get('sentinelUsername')! } : {}),
      ...(params.has('sentinelPassword') ? { sentinelPassword: params.get('sentinelPassword')! } : {})
    }
  }
  if (url.startsWith('redis+cluster:') || url.startsWith('rediss+cluster:')) {
    throw new Error('REDIS_URL: Redis Cluster is not supported (BullMQ queues and the quota scripts need their keys in one slot); use one Redis server or Sentinel')
  }
  const u = new URL(url)
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port === '' ? 6379 : Number(u.port),
    ...userinfo(u.username === '' && u.password === '' ? undefined : `${u.username}:${u.password}`),
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    ...(u.protocol === 'rediss:' ? { tls: {} } : {})
  }
}

function userinfo (auth: string | undefined): { username?: string, password?: string } {
  if (auth === undefined || auth === '') return {}
  const i = auth.indexOf(':')
  const user = decodeURIComponent(i === -1 ? auth : auth.slice(0, i))
  const pass = i === -1 ? '' : decodeURIComponent(auth.slice(i + 1))
  // redis://:password@host is the password alone (Redis before ACLs).
  return { ...(user === '' ? {} : { username: user }), ...(pass === '' ? {} : { password: pass }) }
}

/** What {@link checkRedisDurability} found. */
export interface RedisDurability {
  /** Settings read (absent when CONFIG is refused, as on managed Redis). */
  maxmemoryPolicy?: string
  appendonly?: string
  save?: string
  /** Why a setting could not be read, when it could not. */
  unreadable?: string
  /** True when the server is a Redis Cluster node. */
  cluster: boolean
  /** Problems that can lose unsettled usage (each a sentence for the log). */
  warnings: string[]
}

async function configGet (redis: Redis, name: string): Promise<string | undefined> {
  const reply = await redis.call('CONFIG', 'GET', name) as string[]
  return reply.length >= 2 ? String(reply[1]) : undefined
}

/**
 * Reads what decides whether Redis may lose the usage queue (events not yet settled, i.e. money):
 * `maxmemory-policy` other than `noeviction` lets Redis evict queued jobs under memory pressure;
 * no AOF and no RDB save points lose everything at a restart. CONFIG being disabled (managed
 * Redis) is tolerated: nothing is read then, and the caller says what to check by hand.
 */
export async function checkRedisDurability (redis: Redis): Promise<RedisDurability> {
  const info = await redis.info('cluster').catch(() => '')
  const cluster = /^cluster_enabled:1\s*$/m.test(info)
  const out: RedisDurability = { cluster, warnings: [] }
  try {
    out.maxmemoryPolicy = await configGet(redis, 'maxmemory-policy')
    out.appendonly = await configGet(redis, 'appendonly')
    out.save = await configGet(redis, 'save')
  } catch (err) {
    out.unreadable = (err as Error).message
    return out
  }
  if (out.maxmemoryPolicy !== undefined && out.maxmemoryPolicy !== 'noeviction') {
    out.warnings.push(`Redis maxmemory-policy is ${out.maxmemoryPolicy}: when Redis reaches maxmemory it may evict queued usage events (unsettled charges) and quota reservations; set maxmemory-policy noeviction`)
  }
  if (out.appendonly === 'no' && (out.save ?? '').trim() === '') {
    out.warnings.push('Redis persistence is off (appendonly no, no save points): a Redis restart loses queued usage events (unsettled charges); set appendonly yes')
  }
  return out
}

/** Message of the refusal of a Redis Cluster node. */
export const REDIS_CLUSTER_REFUSED = 'Redis Cluster is not supported: BullMQ queues and the quota scripts need their keys in one hash slot; use one Redis server (with a replica) or Sentinel (redis+sentinel:// URL)'
