import { OptionValues } from '@modelgate/contracts'
import { findAllOptions } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    /** Current options (stored values over defaults). */
    loadOptions: () => Promise<OptionValues>
  }
}

export default fp(async (app: FastifyInstance) => {
  app.decorate('loadOptions', async () => new OptionValues(await findAllOptions(app.db)))
}, { name: 'options', dependencies: ['db'] })
