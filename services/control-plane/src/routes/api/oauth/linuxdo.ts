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

export interface LinuxDOOAuthOptions {
  /** Base of LinuxDO Connect (LINUXDO_OAUTH_URL): token endpoint and user API. */
  oauthUrl: string
}

/** Exchanges the code for a token, then reads the LinuxDO user. */
async function linuxdoIdentity (deps: Deps<'outbound'>, req: FastifyRequest, opts: LinuxDOOAuthOptions, options: OptionValues, code: string): Promise<OAuthIdentity> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    client_id: options.str('LinuxDOClientId'),
    client_secret: options.str('LinuxDOClientSecret')
  })
  // The token request must repeat the redirect_uri of the authorize request, which the console builds from ServerAddress.
  const serverAddress = baseUrl(options.str('ServerAddress'))
  if (serverAddress !== '') form.set('redirect_uri', `${serverAddress}/oauth/linuxdo`)
  const exchange = await fetchProviderJson(deps, req, 'linuxdo', `${baseUrl(opts.oauthUrl)}/oauth2/token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    body: form
  })
  const token = isRecord(exchange.body) ? optionalString(exchange.body['access_token']) : undefined
  if (token === undefined) {
    const detail = providerErrorText(exchange.body, [options.str('LinuxDOClientSecret')])
    if (detail === undefined) throw fail(OM.providerBadAnswer, { provider: 'LinuxDO' })
    throw fail(OM.providerRefused, { provider: 'LinuxDO', detail })
  }

  const profile = await fetchProviderJson(deps, req, 'linuxdo', `${baseUrl(opts.oauthUrl)}/api/user`, {
    headers: { accept: 'application/json', authorization: `Bearer ${token}` }
  })
  if (profile.status !== 200) {
    throw fail(OM.providerRefused, { provider: 'LinuxDO', detail: providerErrorText(profile.body, [options.str('LinuxDOClientSecret'), token]) ?? `HTTP ${profile.status}` })
  }
  const body = profile.body
  if (!isRecord(body) || typeof body['id'] !== 'number' || !Number.isSafeInteger(body['id']) || body['id'] <= 0) {
    throw fail(OM.providerBadAnswer, { provider: 'LinuxDO' })
  }
  if (body['active'] === false) throw fail(OM.linuxdoInactive)
  return {
    provider: 'linuxdo',
    id: String(body['id']),
    displayName: optionalString(body['name']) ?? optionalString(body['username'])
  }
}

const routes: FastifyPluginAsyncTypebox<LinuxDOOAuthOptions> = async (app, opts) => {
  const deps = { db: app.db, redis: app.redis, outbound: app.outbound, publishChange: app.publishChange, loadOptions: app.loadOptions, startSession: app.startSession, optionalAuth: app.optionalAuth }
  app.get('/linuxdo', {
    config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { querystring: CodeCallbackQuery }
  }, codeGrantCallback(deps, { name: 'LinuxDO', enabledOption: 'LinuxDOOAuthEnabled', identity: async (req, options, code) => await linuxdoIdentity(deps, req, opts, options, code) }))
}
export default routes
