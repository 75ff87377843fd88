import { ApiEnvelope, CustomOAuthAuthorizeAnswer } from '@modelgate/contracts'
import { type CustomOAuthProvider, findCustomOAuthProviderBySlug } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type from 'typebox'
import { COM } from '../../../lib/custom-oauth-messages.js'
import { fail, ok } from '../../../lib/errors.js'
import { OM } from '../../../lib/oauth-messages.js'
import { authorizeUrl, customIdentity } from '../../../services/custom-oauth.js'
import { consumeState, finishOAuth, providerErrorText } from '../../../services/oauth.js'

const SlugParams = Type.Object({ slug: Type.String({ maxLength: 64 }) })

/** The provider of `slug` when it is enabled; a clear refusal otherwise. */
async function enabledProvider (app: FastifyInstance, slug: string): Promise<CustomOAuthProvider> {
  const row = await findCustomOAuthProviderBySlug(app.db, slug)
  if (row === undefined) throw fail(COM.notFound)
  if (!row.enabled) throw fail(OM.notEnabled, { provider: row.name })
  return row
}

/**
 * Sign-in and binding through the super admin's OpenID Connect / OAuth 2.0 providers. The
 * console asks `/:slug/authorize` where to send the browser (the server made the PKCE verifier,
 * state and nonce), the provider sends it back to the console's `/oauth/<slug>` page, which
 * calls `/:slug` (new-api's path) with the authorization response.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, secrets: app.secrets, outbound: app.outbound, publishChange: app.publishChange, loadOptions: app.loadOptions, startSession: app.startSession, optionalAuth: app.optionalAuth }
  app.get('/:slug/authorize', {
    config: { auth: 'public', rateLimit: { max: 60, timeWindow: '1 minute' } },
    schema: {
      params: SlugParams,
      querystring: Type.Object({ aff: Type.Optional(Type.String({ maxLength: 64 })) }),
      response: { 200: ApiEnvelope(CustomOAuthAuthorizeAnswer) }
    }
  }, async (req, reply) => {
    const row = await enabledProvider(app, req.params.slug)
    return ok({ url: await authorizeUrl(deps, req, reply, row, req.query.aff ?? '') })
  })

  app.get('/:slug', {
    config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: {
      params: SlugParams,
      querystring: Type.Object({
        code: Type.Optional(Type.String({ maxLength: 2048 })),
        state: Type.Optional(Type.String({ maxLength: 128 })),
        iss: Type.Optional(Type.String({ maxLength: 2048 })),
        error: Type.Optional(Type.String({ maxLength: 256 })),
        error_description: Type.Optional(Type.String({ maxLength: 1024 }))
      })
    }
  }, async (req, reply) => {
    const row = await enabledProvider(app, req.params.slug)
    const { aff, flow } = await consumeState(deps, req, reply, req.query.state)
    // Only a state this provider's authorize step issued carries its verifier and nonce.
    if (flow === undefined || flow['provider'] !== String(row.id)) throw fail(OM.stateInvalid)
    if (req.query.error !== undefined) {
      const detail = providerErrorText({ error: req.query.error, error_description: req.query.error_description }) ?? req.query.error
      throw fail(OM.providerRefused, { provider: row.name, detail })
    }
    if (req.query.code === undefined || req.query.code === '') throw fail(OM.codeMissing)
    const identity = await customIdentity(deps, req, row, flow, req.query.state ?? '', req.query)
    return await finishOAuth(deps, req, reply, identity, aff)
  })
}
export default routes
