import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { fail } from '../../../lib/errors.js'
import { OM } from '../../../lib/oauth-messages.js'
import { finishOAuth, verifyTelegramLogin } from '../../../services/oauth.js'

// Every field the widget sends is signed, including ones added after this was written, so the
// query is taken whole rather than as a fixed list.
const LoginQuery = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 1024 }), { maxProperties: 32 })

// A signed answer stays valid for a day; remembering it that long makes it single use.
const USED_TTL_S = 24 * 3600 + 10 * 60
const usedKey = (hash: string) => `oauth:telegram:used:${hash.toLowerCase()}`

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, publishChange: app.publishChange, loadOptions: app.loadOptions, startSession: app.startSession, optionalAuth: app.optionalAuth }
  app.get('/telegram/login', {
    config: { auth: 'public', rateLimit: { max: 30, timeWindow: '1 minute' } },
    schema: { querystring: LoginQuery }
  }, async (req, reply) => {
    const options = await app.loadOptions()
    const botToken = options.str('TelegramBotToken')
    if (!options.bool('TelegramOAuthEnabled')) throw fail(OM.notEnabled, { provider: 'Telegram' })
    if (botToken === '') throw fail(OM.notConfigured, { provider: 'Telegram' })
    const identity = verifyTelegramLogin(botToken, req.query, Math.floor(Date.now() / 1000))

    const key = usedKey(req.query['hash'] ?? '')
    if (await app.redis.set(key, '1', 'EX', USED_TTL_S, 'NX') !== 'OK') throw fail(OM.telegramUsed)
    try {
      return await finishOAuth(deps, req, reply, identity, req.query['aff'] ?? '')
    } catch (err) {
      // A refusal (registration closed, account bound elsewhere) leaves the answer usable for a retry.
      await app.redis.del(key)
      throw err
    }
  })
}
export default routes
