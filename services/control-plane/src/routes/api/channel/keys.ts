import { CHANNEL_STATUS, ChannelKeyRevealResponse, ChannelKeysResponse, ChannelKeyStatusBody } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { CM } from '../../../lib/channel-messages.js'
import { ok } from '../../../lib/errors.js'
import { recordAudit } from '../../../services/audit.js'
import { listChannelKeys, revealChannelKey, setChannelKeyStatusByAdmin } from '../../../services/channel-keys.js'
import { requireFreshVerification } from '../../../services/secure-verify.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

// Counted per signed-in user (the route is root only, so the caller is known), across replicas.
const REVEAL_RATE_LIMIT = { max: 5, timeWindow: '1 minute', keyGenerator: (req: FastifyRequest): string => `channel-key-reveal:u${req.auth?.user.id ?? req.ip}` }

/** The keys of a channel, masked one by one, and the one way to read a key back (registered under /channel). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  // Keys are write-only to admins; root may read one after verifying again, and each read is audited.
  app.post('/:id/key', {
    config: { auth: 'root', rateLimit: REVEAL_RATE_LIMIT },
    // Checked before the rate limit (which the plugin appends to these hooks), so a call refused
    // for want of verification, which the console repeats after its dialog, is not counted.
    onRequest: async (req) => { await requireFreshVerification(app, req) },
    schema: { params: IdParams, response: { 200: ChannelKeyRevealResponse } }
  }, async (req, reply) => {
    const { key, name } = await revealChannelKey(app, req.params.id)
    await recordAudit(app, req, { action: 'channel.key.reveal', targetType: 'channel', targetId: req.params.id, note: name })
    reply.header('cache-control', 'no-store')
    return ok({ key })
  })

  app.get('/:id/keys', {
    config: { auth: 'admin' },
    schema: { params: IdParams, response: { 200: ChannelKeysResponse } }
  }, async (req) => ok(await listChannelKeys(app, req.params.id)))

  app.put('/:id/keys', {
    config: { auth: 'admin' },
    schema: { params: IdParams, body: ChannelKeyStatusBody, response: { 200: ChannelKeysResponse } }
  }, async (req) => {
    const before = await listChannelKeys(app, req.params.id)
    const { index, keys } = await setChannelKeyStatusByAdmin(app, req.auth!.user.username, req.params.id, req.body)
    const key = keys[index]
    const was = before.find((k) => k.fingerprint === key?.fingerprint)
    if (key !== undefined) {
      await recordAudit(app, req, { action: 'channel.key.status', targetType: 'channel', targetId: req.params.id, before: { status: was?.status }, after: { status: key.status }, note: `key ${index + 1} (${key.fingerprint})` })
    }
    return ok(keys, req.t(req.body.status === CHANNEL_STATUS.enabled ? CM.keyEnabled : CM.keyDisabled, { n: index + 1 }))
  })
}
export default routes
