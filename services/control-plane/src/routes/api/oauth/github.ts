import type { OptionValues } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { fail } from '../../../lib/errors.js'
import { OM } from '../../../lib/oauth-messages.js'
import type { Deps } from '../../../services/deps.js'
import {
  baseUrl,
  CodeCallbackQuery,
  codeGrantCallback,
  fetchProviderJson,
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

/** Exchanges the code for a token, then reads the GitHub user. */
async function githubIdentity (deps: Deps<'outbound'>, req: FastifyRequest, opts: GitHubOAuthOptions, options: OptionValues, code: string): Promise<OAuthIdentity> {
  const exchange = await fetchProviderJson(deps, req, 'github', `${baseUrl(opts.oauthUrl)}/login/oauth/access_token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: options.str('GitHubClientId'), client_secret: options.str('GitHubClientSecret'), code })
  })
  // GitHub reports a bad code with HTTP 200 and an `error` field instead of a token.
  const token = isRecord(exchange.body) ? optionalString(exchange.body['access_token']) : undefined
  if (token === undefined) {
    const detail = providerErrorText(exchange.body, [options.str('GitHubClientSecret')])
    if (detail === undefined) throw fail(OM.providerBadAnswer, { provider: 'GitHub' })
    throw fail(OM.providerRefused, { provider: 'GitHub', detail })
  }

  const profile = await fetchProviderJson(deps, req, 'github', `${baseUrl(opts.apiUrl)}/user`, {
    headers: { accept: 'application/vnd.github+json', authorization: `Bearer ${token}`, 'user-agent': 'ModelGate' }
  })
  if (profile.status !== 200) {
    throw fail(OM.providerRefused, { provider: 'GitHub', detail: providerErrorText(profile.body, [options.str('GitHubClientSecret'), token]) ?? `HTTP ${profile.status}` })
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
  const deps = { db: app.db, redis: app.redis, outbound: app.outbound, publishChange: app.publishChange, loadOptions: app.loadOptions, startSession: app.startSession, optionalAuth: app.optionalAuth }
  app.get('/github', {
    config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { querystring: CodeCallbackQuery }
  }, codeGrantCallback(deps, { name: 'GitHub', enabledOption: 'GitHubOAuthEnabled', identity: async (req, options, code) => await githubIdentity(deps, req, opts, options, code) }))
}
export default routes
