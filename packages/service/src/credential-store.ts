import type { ConfigChange } from '@modelgate/contracts'
import { type Database, type Kysely, replaceChannelCredentials } from '@modelgate/db'
import type { CredentialStore, CredentialUpdate } from '@modelgate/providers'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { channelKeys, keyFingerprint, parseJsonObject } from './channels.js'
import type { SecretBox } from './crypto.js'
import { acquireLock, releaseLock } from './redis-lock.js'

/** What {@link redisCredentialStore} needs. */
export interface CredentialStoreDeps {
  /** The service's Redis client (its keyPrefix isolates deployments sharing one Redis). */
  redis: Redis
  db: Kysely<Database>
  box: SecretBox
  /** Announces a channel change to the gateways, so they reload the written-back credentials. */
  publish: (change: ConfigChange) => Promise<void>
  log: Pick<FastifyBaseLogger, 'warn'>
}

/** How long a stored pair is kept: longer than a refresh token lives unused. */
export const CREDENTIAL_TTL_MS = 90 * 24 * 3600_000
/** Attempts to write renewed credentials back when the row changes under the write. */
const SAVE_ATTEMPTS = 3

const valueKey = (id: string): string => `oauth:credential:${id}`
const lockKey = (id: string): string => `oauth:lock:${id}`

/**
 * The credential store adaptors share renewals through (ChannelConfig.credentials), on Redis:
 * values sealed like channel keys and kept {@link CREDENTIAL_TTL_MS}, locks taken with SET NX PX
 * and released only by their holder. `save` writes renewed credentials into the channel row (the sealed key's lines, the
 * setting JSON) with one compare-and-set UPDATE, retried when the row changed meanwhile, then
 * announces the channel change; it logs its failures and never throws.
 */
export function redisCredentialStore (deps: CredentialStoreDeps): CredentialStore {
  const { redis } = deps
  return {
    get: async (id) => {
      const sealed = await redis.get(valueKey(id))
      return sealed === null ? undefined : deps.box.open(sealed)
    },
    set: async (id, value) => { await redis.set(valueKey(id), deps.box.seal(value), 'PX', CREDENTIAL_TTL_MS) },
    acquire: async (id, ttlMs) => await acquireLock(redis, lockKey(id), ttlMs),
    release: async (id, token) => { await releaseLock(redis, lockKey(id), token) },
    save: async (channelId, update) => {
      try {
        await saveCredentials(deps, channelId, update)
      } catch (err) {
        deps.log.warn({ err, channel: channelId }, 'renewed channel credentials not written back')
      }
    }
  }
}

async function saveCredentials (deps: CredentialStoreDeps, id: number, update: CredentialUpdate): Promise<void> {
  for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
    const row = await deps.db.selectFrom('channels').select(['key', 'setting']).where('id', '=', id).executeTakeFirst()
    if (row === undefined) return
    const lines = channelKeys(row, deps.box)
    const renewed = lines.map((line) => update.key(line) ?? line)
    const moved = lines.flatMap((line, i) => renewed[i] === line ? [] : [[keyFingerprint(line), keyFingerprint(renewed[i]!)] as const])
    const setting = update.setting(parseJsonObject(row.setting))
    if (moved.length === 0 && setting === undefined) return
    const written = await replaceChannelCredentials(deps.db, {
      id,
      from: row,
      ...(moved.length === 0 ? {} : { key: deps.box.seal(renewed.join('\n')), moved }),
      ...(setting === undefined ? {} : { setting: JSON.stringify(setting) })
    })
    if (written) {
      await deps.publish({ kind: 'channel', id })
      return
    }
  }
  deps.log.warn({ channel: id }, 'renewed channel credentials not written back: the channel kept changing')
}
