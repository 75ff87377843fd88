import { pricingTables } from '@modelgate/pricing'
import { CHANNEL_TYPE_NAMES, defaultModelsByType } from '@modelgate/providers'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  // Default model lists per channel type, for the channel form's "fill related models".
  app.get('/', { config: { auth: 'admin' } }, async () => ok(defaultModelsByType()))
  // Every channel type of the specification with its name.
  app.get('/types', { config: { auth: 'admin' } }, async () => ok(CHANNEL_TYPE_NAMES))
  // The names of the models that have a ratio or a per-call price (the relay refuses the others),
  // so that the channel form can point at the models it lists without a price.
  app.get('/priced', { config: { auth: 'admin' } }, async () => {
    const tables = pricingTables(await app.loadOptions())
    return ok([...new Set([...Object.keys(tables.modelRatio), ...Object.keys(tables.modelPrice)])].sort())
  })
}
export default routes
