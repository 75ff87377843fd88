import type { OptionValues } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { fail } from '../../../lib/errors.js'
import { OM } from '../../../lib/oauth-messages.js'
import {
  baseUrl,
  consumeState,
  fetchProviderJson,
  finishOAuth,
  isRecord,
  type OAuthIdentity,
  optionalString,
  providerErrorText
} from '../../../services/oauth.js'

export interface GitHubOAuthOptions {
  /** Base of the authorize and token endpoints (GITHUB_OAUTH_URL). */
  oauthUrl: string
  /** Base of the REST API (GITHUB_API_URL). */
  apiUrl: string
}

const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 512 })),
  state: Type.Optional(Type.String({ maxLength: 128 }))
})

/** Exchanges the code for a token, then reads the GitHub user. */
async function githubIdentity (req: FastifyRequest, opts: GitHubOAuthOptions, options: OptionValues, code: string): Promise<OAuthIdentity> {
  const exchange = await fetchProviderJson(req, 'github', `${baseUrl(opts.oauthUrl)}/login/oauth/access_token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: options.str('GitHubClientId'), client_secret: options.str('GitHubClientSecret'), code })
  })
  // GitHub reports a bad code with HTTP 200 and an `error` field instead of a token.
  const token = isRecord(exchange.body) ? optionalString(exchange.body['access_token']) : undefined
  if (token === undefined) {
    const detail = providerErrorText(exchange.body)
    if (detail === undefined) throw fail(OM.providerBadAnswer, { provider: 'GitHub' })
    throw fail(OM.providerRefused, { provider: 'GitHub', detail })
  }

  const profile = await fetchProviderJson(req, 'github', `${baseUrl(opts.apiUrl)}/user`, {
    headers: { accept: 'application/vnd.github+json', authorization: `Bearer ${token}`, 'user-agent': 'ModelGate' }
  })
  if (profile.status !== 200) {
    throw fail(OM.providerRefused, { provider: 'GitHub', detail: providerErrorText(profile.body) ?? `HTTP ${profile.status}` })
  }
  const body = profile.body
  if (!isRecord(body) || typeof body['id'] !== 'number' || !Number.isSafeInteger(body['id']) || body['id'] <= 0) {
    throw fail(OM.providerBadAnswer, { provider: 'GitHub' })
  }
  const email = optionalString(body['email'])
  return {
    provider: 'github',
    id: String(body['id']),
    displayName: optionalString(body['name']) ?? optionalString(body['login']),
    email: email !== undefined && email.includes('@') ? email : undefined
  }
}

const routes: FastifyPluginAsyncTypebox<GitHubOAuthOptions> = async (app, opts) => {
  app.get('/github', {
    config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { querystring: CallbackQuery }
  }, async (req, reply) => {
    const options = await app.loadOptions()
    if (!options.bool('GitHubOAuthEnabled')) throw fail(OM.notEnabled, { provider: 'GitHub' })
    const { aff } = await consumeState(app, req, reply, req.query.state)
    if (req.query.code === undefined || req.query.code === '') throw fail(OM.codeMissing)
    const identity = await githubIdentity(req, opts, options, req.query.code)
    return await finishOAuth(app, req, reply, identity, aff)
  })
}
export default routes
