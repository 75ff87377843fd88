import { ApiEnvelope, CustomOAuthBindingView } from '@modelgate/contracts'
import { deleteCustomOAuthLink, listCustomOAuthLinksOfUser } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { COM } from '../../../lib/custom-oauth-messages.js'
import { fail, ok } from '../../../lib/errors.js'

/**
 * The caller's accounts at the super admin's OpenID Connect / OAuth 2.0 providers (new-api's
 * `/api/user/oauth/bindings`). Binding is a sign-in through the provider while signed in.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/oauth/bindings', {
    config: { auth: 'user' },
    schema: { response: { 200: ApiEnvelope(Type.Array(CustomOAuthBindingView)) } }
  }, async (req) => {
    const links = await listCustomOAuthLinksOfUser(app.db, req.auth!.user.id)
    return ok(links.map((l) => ({
      provider_id: l.provider_id,
      provider_name: l.provider_name,
      provider_slug: l.provider_slug,
      provider_enabled: l.provider_enabled,
      provider_user_id: l.subject,
      created_at: l.created_at
    })))
  })

  app.delete('/oauth/bindings/:provider_id', {
    config: { auth: 'user', rateLimit: { max: 20, timeWindow: '1 minute' } },
    schema: { params: Type.Object({ provider_id: Type.Integer({ minimum: 1 }) }) }
  }, async (req) => {
    const user = req.auth!.user
    const links = await listCustomOAuthLinksOfUser(app.db, user.id)
    if (!links.some((l) => l.provider_id === req.params.provider_id)) throw fail(COM.notBound)
    // Without a password, an e-mail to reset one, or another binding, the account could never sign in again.
    const otherWays = user.password_hash !== '' || user.email !== '' ||
      [user.github_id, user.linuxdo_id, user.wechat_id, user.telegram_id].some((id) => id !== '') ||
      links.some((l) => l.provider_id !== req.params.provider_id && l.provider_enabled)
    if (!otherWays) throw fail(COM.lastSignIn)
    if (!await deleteCustomOAuthLink(app.db, user.id, req.params.provider_id)) throw fail(COM.notBound)
    return ok(null, req.t(COM.unbound))
  })
}
export default routes
