import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'
import { groupRatios } from '../../../services/groups.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', { config: { auth: 'admin' } }, async () => ok(Object.keys(groupRatios(await app.loadOptions()))))
}
export default routes
