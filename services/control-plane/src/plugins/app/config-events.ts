import { type ConfigChange, configChannel } from '@modelgate/contracts'
import { publishConfigChange } from '@modelgate/service'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { QuotaStore } from '@modelgate/quota'

declare module 'fastify' {
  interface FastifyInstance {
    /** Cached balances the gateways spend from; Postgres-side balance changes must be applied here too. */
    quota: QuotaStore
    /** Announces a configuration change to every gateway and control-plane replica. */
    publishChange: (change: ConfigChange) => Promise<void>
    /** Calls `listener` for every change announced by any replica (this one included). */
    onChange: (listener: (change: ConfigChange) => void) => void
  }
}

export default fp(async (app: FastifyInstance, opts: { keyPrefix: string }) => {
  const channel = configChannel(opts.keyPrefix)
  const listeners: Array<(change: ConfigChange) => void> = []
  // A subscribed connection can do nothing else, so it is a second connection.
  const sub: Redis = app.redis.duplicate({ lazyConnect: true })
  sub.on('error', (err: Error) => app.log.warn({ err }, 'config subscriber error'))
  sub.on('message', (_ch: string, text: string) => {
    let change: ConfigChange
    try {
      change = JSON.parse(text) as ConfigChange
    } catch {
      return
    }
    for (const l of listeners) l(change)
  })
  sub.connect().then(() => sub.subscribe(channel)).catch((err: unknown) => app.log.warn({ err }, 'config subscribe failed'))
  app.addHook('onClose', async () => { sub.disconnect() })

  app.decorate('publishChange', async (change: ConfigChange) => { await publishConfigChange({ db: app.db, redis: app.redis, keyPrefix: opts.keyPrefix }, change) })
  app.decorate('quota', new QuotaStore(app.redis))
  app.decorate('onChange', (listener: (change: ConfigChange) => void) => { listeners.push(listener) })
}, { name: 'config-events', dependencies: ['db', 'redis'] })
