import { CHANNEL_TYPE_NAMES, defaultModelsByType } from '@modelgate/providers'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  // Default model lists per channel type, for the channel form's "fill related models".
  app.get('/', { config: { auth: 'admin' } }, async () => ok(defaultModelsByType()))
  // Every channel type of the specification with its name.
  app.get('/types', { config: { auth: 'admin' } }, async () => ok(CHANNEL_TYPE_NAMES))
}
export default routes
