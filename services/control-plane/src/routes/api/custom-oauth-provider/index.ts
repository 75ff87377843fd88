import {
  ApiEnvelope,
  CustomOAuthDiscoveryBody,
  CustomOAuthDiscoveryResult,
  CustomOAuthProviderCreateBody,
  CustomOAuthProviderUpdateBody,
  CustomOAuthProviderView
} from '@modelgate/contracts'
import {
  type CustomOAuthProvider,
  type CustomOAuthProviderUpdate,
  deleteCustomOAuthProvider,
  findCustomOAuthProviderById,
  findCustomOAuthProviderBySlug,
  insertCustomOAuthProvider,
  listCustomOAuthProviders,
  updateCustomOAuthProvider
} from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type from 'typebox'
import { COM } from '../../../lib/custom-oauth-messages.js'
import { fail, ok } from '../../../lib/errors.js'
import { recordAudit } from '../../../services/audit.js'
import { checkProvider, discoverProvider, providerAudit, providerView, RESERVED_SLUGS, sealSecret } from '../../../services/custom-oauth.js'
import { requireFreshVerification } from '../../../services/secure-verify.js'
import { isUniqueViolation } from '../../../services/users.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
const trimmed = (v: string | undefined) => v?.trim()

async function checkSlug (app: FastifyInstance, slug: string, id?: number): Promise<void> {
  if (RESERVED_SLUGS.has(slug)) throw fail(COM.slugReserved, { slug })
  const holder = await findCustomOAuthProviderBySlug(app.db, slug)
  if (holder !== undefined && holder.id !== id) throw fail(COM.slugTaken, { slug })
}

/** The stored columns a create or update body sets (the secret apart). */
function columnsOf (body: CustomOAuthProviderUpdateBody): CustomOAuthProviderUpdate {
  const out: CustomOAuthProviderUpdate = {}
  if (body.name !== undefined) out.name = body.name.trim()
  if (body.slug !== undefined) out.slug = body.slug
  if (body.kind !== undefined) out.kind = body.kind
  if (body.enabled !== undefined) out.enabled = body.enabled
  if (body.issuer !== undefined) out.issuer = body.issuer.trim()
  if (body.authorization_endpoint !== undefined) out.authorization_endpoint = body.authorization_endpoint.trim()
  if (body.token_endpoint !== undefined) out.token_endpoint = body.token_endpoint.trim()
  if (body.user_info_endpoint !== undefined) out.userinfo_endpoint = body.user_info_endpoint.trim()
  if (body.jwks_url !== undefined) out.jwks_uri = body.jwks_url.trim()
  if (body.client_id !== undefined) out.client_id = body.client_id.trim()
  if (body.token_endpoint_auth_method !== undefined) out.token_endpoint_auth_method = body.token_endpoint_auth_method
  if (body.scopes !== undefined) out.scopes = body.scopes.trim()
  if (body.user_id_field !== undefined) out.user_id_field = body.user_id_field.trim()
  if (body.username_field !== undefined) out.username_field = body.username_field.trim()
  if (body.display_name_field !== undefined) out.display_name_field = body.display_name_field.trim()
  if (body.email_field !== undefined) out.email_field = body.email_field.trim()
  if (body.auto_register !== undefined) out.auto_register = body.auto_register
  return out
}

/**
 * OpenID Connect and OAuth 2.0 sign-in providers (new-api's `/api/custom-oauth-provider`), for
 * the super admin. The client secret is write-only: answers carry a hint; a blank secret keeps
 * the stored one, and setting one needs a fresh secure verification, like credential options.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, secrets: app.secrets, outbound: app.outbound }
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store')
  })

  app.post('/discovery', {
    config: { auth: 'root', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { body: CustomOAuthDiscoveryBody, response: { 200: ApiEnvelope(CustomOAuthDiscoveryResult) } }
  }, async (req) => ok(await discoverProvider(deps, req, req.body)))

  app.get('/', {
    config: { auth: 'root' },
    schema: { response: { 200: ApiEnvelope(Type.Array(CustomOAuthProviderView)) } }
  }, async () => ok((await listCustomOAuthProviders(app.db)).map(providerView)))

  app.get('/:id', {
    config: { auth: 'root' },
    schema: { params: IdParams, response: { 200: ApiEnvelope(CustomOAuthProviderView) } }
  }, async (req) => {
    const row = await findCustomOAuthProviderById(app.db, req.params.id)
    if (row === undefined) throw fail(COM.notFound)
    return ok(providerView(row))
  })

  app.post('/', {
    config: { auth: 'root' },
    schema: { body: CustomOAuthProviderCreateBody, response: { 200: ApiEnvelope(CustomOAuthProviderView) } }
  }, async (req) => {
    const body = req.body
    const secret = trimmed(body.client_secret) ?? ''
    const row = {
      kind: body.kind ?? 'oidc',
      issuer: '',
      authorization_endpoint: '',
      token_endpoint: '',
      userinfo_endpoint: '',
      jwks_uri: '',
      ...columnsOf(body),
      name: body.name.trim(),
      slug: body.slug,
      client_id: body.client_id.trim(),
      ...(secret === '' ? { client_secret_encrypted: '', client_secret_hint: '' } : sealSecret(deps, secret))
    } as const
    await checkSlug(app, row.slug)
    await checkProvider(deps, row)
    await requireFreshVerification(deps, req)
    let created: CustomOAuthProvider
    try {
      created = await app.db.transaction().execute(async (trx) => {
        const inserted = await insertCustomOAuthProvider(trx, row)
        await recordAudit(deps, req, { action: 'oauth_provider.create', targetType: 'oauth_provider', targetId: inserted.id, after: providerAudit(deps, inserted) }, trx)
        return inserted
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw fail(COM.slugTaken, { slug: row.slug })
      throw err
    }
    await app.oauthProvidersChanged()
    return ok(providerView(created), req.t(COM.created))
  })

  app.put('/:id', {
    config: { auth: 'root' },
    schema: { params: IdParams, body: CustomOAuthProviderUpdateBody, response: { 200: ApiEnvelope(CustomOAuthProviderView) } }
  }, async (req) => {
    const before = await findCustomOAuthProviderById(app.db, req.params.id)
    if (before === undefined) throw fail(COM.notFound)
    const patch = columnsOf(req.body)
    // Blank keeps the stored secret: the form sends back what it read, which is never the secret.
    const secret = trimmed(req.body.client_secret) ?? ''
    if (secret !== '') Object.assign(patch, sealSecret(deps, secret))
    if (patch.slug !== undefined) await checkSlug(app, patch.slug, before.id)
    await checkProvider(deps, { ...before, ...patch } as CustomOAuthProvider)
    if (secret !== '') await requireFreshVerification(deps, req)
    let after: CustomOAuthProvider | undefined
    try {
      after = await app.db.transaction().execute(async (trx) => {
        const updated = await updateCustomOAuthProvider(trx, before.id, patch)
        if (updated !== undefined) {
          await recordAudit(deps, req, { action: 'oauth_provider.update', targetType: 'oauth_provider', targetId: updated.id, before: providerAudit(deps, before), after: providerAudit(deps, updated) }, trx)
        }
        return updated
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw fail(COM.slugTaken, { slug: patch.slug ?? before.slug })
      throw err
    }
    if (after === undefined) throw fail(COM.notFound)
    await app.oauthProvidersChanged()
    return ok(providerView(after), req.t(COM.updated))
  })

  app.delete('/:id', {
    config: { auth: 'root' },
    schema: { params: IdParams }
  }, async (req) => {
    const { deleted, links } = await deleteCustomOAuthProvider(app.db, req.params.id, async (trx, row) => {
      await recordAudit(deps, req, { action: 'oauth_provider.delete', targetType: 'oauth_provider', targetId: row.id, before: providerAudit(deps, row) }, trx)
    })
    if (links > 0) throw fail(COM.hasBindings, { count: links })
    if (deleted === undefined) throw fail(COM.notFound)
    await app.oauthProvidersChanged()
    return ok(null, req.t(COM.deleted))
  })
}
export default routes
