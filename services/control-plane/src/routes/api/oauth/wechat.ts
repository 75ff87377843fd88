import type { OptionValues } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { fail } from '../../../lib/errors.js'
import { OM } from '../../../lib/oauth-messages.js'
import type { Deps } from '../../../services/deps.js'
import {
  baseUrl,
  bindIdentity,
  bound,
  fetchProviderJson,
  isRecord,
  type OAuthIdentity,
  optionalString,
  signInWithIdentity
} from '../../../services/oauth.js'

const CodeQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 128 })),
  aff: Type.Optional(Type.String({ maxLength: 64 }))
})

// The code is short and typed by hand from the WeChat official account, so guessing is throttled.
const CODE_RATE_LIMIT = { max: 20, timeWindow: '1 minute' }

/** Refuses unless WeChat sign-in is enabled and its server is configured. */
function checkEnabled (options: OptionValues): void {
  if (!options.bool('WeChatAuthEnabled')) throw fail(OM.notEnabled, { provider: 'WeChat' })
  if (options.str('WeChatServerAddress') === '') throw fail(OM.notConfigured, { provider: 'WeChat' })
}

/** Turns the code into the user's openid through the configured WeChat server. */
async function wechatIdentity (deps: Deps<'outbound'>, req: FastifyRequest, options: OptionValues, code: string | undefined): Promise<OAuthIdentity> {
  if (code === undefined || code.trim() === '') throw fail(OM.codeMissing)
  const url = `${baseUrl(options.str('WeChatServerAddress'))}/api/wechat/user?code=${encodeURIComponent(code.trim())}`
  const { status, body } = await fetchProviderJson(deps, req, 'wechat', url, {
    headers: { accept: 'application/json', authorization: options.str('WeChatServerToken') }
  })
  if (!isRecord(body) || typeof body['success'] !== 'boolean') throw fail(OM.providerBadAnswer, { provider: 'WeChat' })
  if (!body['success']) {
    const detail = optionalString(body['message'])?.slice(0, 200) ?? `HTTP ${status}`
    throw fail(OM.providerRefused, { provider: 'WeChat', detail })
  }
  const openid = optionalString(body['data'])
  if (openid === undefined || openid.length > 128) throw fail(OM.providerBadAnswer, { provider: 'WeChat' })
  return { provider: 'wechat', id: openid }
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, outbound: app.outbound, publishChange: app.publishChange, loadOptions: app.loadOptions, startSession: app.startSession }
  app.get('/wechat', {
    config: { auth: 'public', rateLimit: CODE_RATE_LIMIT },
    schema: { querystring: CodeQuery }
  }, async (req, reply) => {
    const options = await app.loadOptions()
    checkEnabled(options)
    const identity = await wechatIdentity(deps, req, options, req.query.code)
    return await signInWithIdentity(deps, req, reply, identity, req.query.aff ?? '')
  })

  app.get('/wechat/bind', {
    config: { auth: 'user', rateLimit: CODE_RATE_LIMIT },
    schema: { querystring: CodeQuery }
  }, async (req) => {
    const options = await app.loadOptions()
    checkEnabled(options)
    const identity = await wechatIdentity(deps, req, options, req.query.code)
    return bound(await bindIdentity(deps, req.auth!.user, identity))
  })
}
export default routes
