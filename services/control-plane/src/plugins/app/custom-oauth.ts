import type { PublicCustomOAuthProvider } from '@modelgate/contracts'
import { listEnabledCustomOAuthProviders } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    /** The enabled custom sign-in providers for /api/status, cached until any replica changes one. */
    publicOAuthProviders: () => Promise<PublicCustomOAuthProvider[]>
    /** Drops the cached list here and announces the change to the other replicas. */
    oauthProvidersChanged: () => Promise<void>
  }
}

// Dropped on every announced change; the TTL only covers a missed message.
const CACHE_TTL_MS = 10_000

export default fp(async (app: FastifyInstance) => {
  let cached: { list: PublicCustomOAuthProvider[], at: number } | undefined
  app.onChange((change) => { if (change.kind === 'oauth_providers') cached = undefined })

  app.decorate('publicOAuthProviders', async () => {
    if (cached !== undefined && Date.now() - cached.at < CACHE_TTL_MS) return cached.list
    const list = (await listEnabledCustomOAuthProviders(app.db)).map(({ id, slug, name }) => ({ id, slug, name }))
    cached = { list, at: Date.now() }
    return list
  })
  app.decorate('oauthProvidersChanged', async () => {
    cached = undefined
    await app.publishChange({ kind: 'oauth_providers' })
  })
}, { name: 'custom-oauth', dependencies: ['db', 'config-events'] })
