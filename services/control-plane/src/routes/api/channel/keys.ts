import { ChannelKeysResponse, ChannelKeyStatusBody } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { CM } from '../../../lib/channel-messages.js'
import { ok } from '../../../lib/errors.js'
import { listChannelKeys, setChannelKeyStatusByAdmin } from '../../../services/channel-keys.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

/** The keys of a multi-key channel, one by one (registered under /channel); admins only. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/:id/keys', {
    config: { auth: 'admin' },
    schema: { params: IdParams, response: { 200: ChannelKeysResponse } }
  }, async (req) => ok(await listChannelKeys(app, req.params.id)))

  app.put('/:id/keys', {
    config: { auth: 'admin' },
    schema: { params: IdParams, body: ChannelKeyStatusBody, response: { 200: ChannelKeysResponse } }
  }, async (req) => {
    const { index, keys } = await setChannelKeyStatusByAdmin(app, req.auth!.user.username, req.params.id, req.body)
    return ok(keys, req.t(req.body.status === 1 ? CM.keyEnabled : CM.keyDisabled, { n: index + 1 }))
  })
}
export default routes
