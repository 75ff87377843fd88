import { CHANNEL_STATUS, ChannelKeyRevealResponse, ChannelKeysResponse, ChannelKeyStatusBody } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { CM } from '../../../lib/channel-messages.js'
import { ok } from '../../../lib/errors.js'
import { perUserPerMinute } from '../../../lib/rate-limits.js'
import { recordAudit } from '../../../services/audit.js'
import { listChannelKeys, revealChannelKey, setChannelKeyStatusByAdmin } from '../../../services/channel-keys.js'
import { requireFreshVerification } from '../../../services/secure-verify.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

// Counted per signed-in user (the route is root only, so the caller is known), across replicas.
const REVEAL_RATE_LIMIT = perUserPerMinute(5, 'channel-key-reveal:')

/** The keys of a channel, masked one by one, and the one way to read a key back (registered under /channel). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, secrets: app.secrets, publishChange: app.publishChange }
  // Keys are write-only to admins; root may read one after verifying again, and each read is audited.
  app.post('/:id/key', {
    config: { auth: 'root', rateLimit: REVEAL_RATE_LIMIT },
    // Checked before the rate limit (which the plugin appends to these hooks), so a call refused
    // for want of verification, which the console repeats after its dialog, is not counted.
    onRequest: async (req) => { await requireFreshVerification(deps, req) },
    schema: { params: IdParams, response: { 200: ChannelKeyRevealResponse } }
  }, async (req, reply) => {
    const { key, name } = await revealChannelKey(deps, req.params.id)
    await recordAudit(deps, req, { action: 'channel.key.reveal', targetType: 'channel', targetId: req.params.id, note: name })
    reply.header('cache-control', 'no-store')
    return ok({ key })
  })

  app.get('/:id/keys', {
    config: { auth: 'admin' },
    schema: { params: IdParams, response: { 200: ChannelKeysResponse } }
  }, async (req) => ok(await listChannelKeys(deps, req.params.id)))

  app.put('/:id/keys', {
    config: { auth: 'admin' },
    schema: { params: IdParams, body: ChannelKeyStatusBody, response: { 200: ChannelKeysResponse } }
  }, async (req) => {
    const before = await listChannelKeys(deps, req.params.id)
    const { index, keys } = await setChannelKeyStatusByAdmin(deps, req.auth!.user.username, req.params.id, req.body)
    const key = keys[index]
    const was = before.find((k) => k.fingerprint === key?.fingerprint)
    if (key !== undefined) {
      await recordAudit(deps, req, { action: 'channel.key.status', targetType: 'channel', targetId: req.params.id, before: { status: was?.status }, after: { status: key.status }, note: `key ${index + 1} (${key.fingerprint})` })
    }
    return ok(keys, req.t(req.body.status === CHANNEL_STATUS.enabled ? CM.keyEnabled : CM.keyDisabled, { n: index + 1 }))
  })
}
export default routes
