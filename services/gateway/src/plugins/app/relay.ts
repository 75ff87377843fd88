import type { GatewayConfig } from '@modelgate/config'
import { type ConfigChange, configChannel } from '@modelgate/contracts'
import { QuotaStore } from '@modelgate/quota'
import { bullConnection, redisCredentialStore, SecretBox } from '@modelgate/service'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CallerCache } from '../../relay/callers.js'
import { InFlightCalls, type RouteDeps } from '../../relay/deps.js'
import { RelayState } from '../../relay/state.js'
import { UsagePublisher } from '../../relay/usage.js'

declare module 'fastify' {
  interface FastifyInstance {
    relayState: RelayState
    usagePublisher: UsagePublisher
    /** What the relay routes work with: the state, the quota store, the usage publisher, the caller cache, ... */
    relayDeps: RouteDeps
  }
}

/**
 * The relay's state in this process: options, prices and channels in memory, following the
 * control plane's change announcements; the caller cache; the quota store; the usage publisher;
 * the upstream calls in flight, given DRAIN_TIMEOUT_MS at shutdown.
 */
async function relay (app: FastifyInstance, opts: { config: Readonly<GatewayConfig> }) {
  const { config } = opts
  const box = new SecretBox(config.CRYPTO_SECRET)
  const publish = async (change: ConfigChange): Promise<void> => {
    await app.redis.publish(configChannel(config.REDIS_KEY_PREFIX), JSON.stringify(change))
  }
  // OAuth renewals (Claude Code, Codex) shared with the other replicas and written back to the channel.
  const credentials = redisCredentialStore({ redis: app.redis, db: app.db, box, log: app.log, publish })
  const state = new RelayState(app.db, box, app.log, credentials, app.outbound)
  await state.loadAll()
  const callers = new CallerCache(app.db, app.redis)
  state.onChange((change) => {
    if (change.kind === 'user') callers.forget({ userId: change.id })
    else if (change.kind === 'token') callers.forget({ tokenId: change.id })
  })
  // Token and user records held in memory are read again (from Redis, else Postgres) after each
  // full reload: a token disabled or a user banned while its change message was lost is refused
  // within STATE_REFRESH_MS, not only when the 60 s memory entry expires.
  state.onResync(() => { callers.clear() })
  const stopFollowing = await state.follow(app.redis, config.REDIS_KEY_PREFIX, config.STATE_REFRESH_MS)
  const usage = new UsagePublisher(bullConnection(config.REDIS_URL), `${config.REDIS_KEY_PREFIX}bull`, app.log)
  const quota = new QuotaStore(app.redis, { leaseMs: config.RELAY_LEASE_TTL_MS })
  // Shutdown: in-flight relays get DRAIN_TIMEOUT_MS to finish (Fastify waits for them before
  // onClose); the upstream calls still running then are cut, so their streams end with an error
  // event, are billed for what was sent, and their usage events go out before the process exits.
  const inFlight = new InFlightCalls()
  let drainTimer: NodeJS.Timeout | undefined
  app.addHook('preClose', (done) => {
    drainTimer = setTimeout(() => {
      if (inFlight.size > 0) app.log.warn({ streams: inFlight.size, drainMs: config.DRAIN_TIMEOUT_MS }, 'drain timeout: cutting the relays still running')
      inFlight.cutAll(new Error('the gateway is shutting down'))
    }, config.DRAIN_TIMEOUT_MS)
    drainTimer.unref()
    done()
  })
  // Close order: stop taking changes; in-flight relays finish before Fastify runs onClose.
  app.addHook('onClose', async () => {
    clearTimeout(drainTimer)
    await stopFollowing()
    await usage.close()
    quota.stopRenewing()
  })

  app.decorate('relayState', state)
  app.decorate('usagePublisher', usage)
  app.decorate('relayDeps', {
    state,
    quota,
    usage,
    db: app.db,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    upstreamFirstByteTimeoutMs: config.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
    outbound: app.outbound,
    publishChannelChange: async (id: number) => { await publish({ kind: 'channel', id }) },
    inFlight,
    callers
  } satisfies RouteDeps)
}

// Not encapsulated: the relay routes and the tests read its decorators.
export default fp(relay, { name: 'relay', dependencies: ['db', 'redis'] })
