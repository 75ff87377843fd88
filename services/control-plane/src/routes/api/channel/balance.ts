import { ChannelBalanceResponse, ChannelBalancesResponse } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ok } from '../../../lib/errors.js'
import { updateAllChannelBalances, updateChannelBalance } from '../../../services/channel-balance.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

/** Channel balances read from the providers' billing endpoints (registered under /channel); admins only. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, log: app.log, secrets: app.secrets, outbound: app.outbound }
  app.get('/update_balance/:id', {
    config: { auth: 'admin' },
    schema: { params: IdParams, response: { 200: ChannelBalanceResponse } }
  }, async (req) => ({ success: true, message: '', balance: await updateChannelBalance(deps, req.params.id) }))

  // Waits for every channel, as peer gateways do; the counts ride along for the console's toast.
  app.get('/update_balance', {
    config: { auth: 'admin' },
    schema: { response: { 200: ChannelBalancesResponse } }
  }, async () => ok(await updateAllChannelBalances(deps)))
}
export default routes
