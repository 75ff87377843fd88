import { type OptionKey, OptionValues } from '@modelgate/contracts'
import { type Database, findAllOptions, type Transaction, upsertOption } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    /** Current options (stored values over defaults), cached until any replica changes one. */
    loadOptions: () => Promise<OptionValues>
    /**
     * Stores options and announces the change. Values must already be validated. `within` runs
     * in the same transaction (the audit entry of the change).
     */
    saveOptions: (values: Partial<Record<OptionKey, string>>, within?: (trx: Transaction<Database>) => Promise<void>) => Promise<void>
  }
}

// The cache is dropped on every announced change; the TTL is only a safety net for a missed message.
const CACHE_TTL_MS = 10_000

export default fp(async (app: FastifyInstance) => {
  let cached: { values: OptionValues, at: number } | undefined
  app.onChange((change) => { if (change.kind === 'options') cached = undefined })

  app.decorate('loadOptions', async () => {
    if (cached !== undefined && Date.now() - cached.at < CACHE_TTL_MS) return cached.values
    const values = new OptionValues(await findAllOptions(app.db))
    cached = { values, at: Date.now() }
    return values
  })
  app.decorate('saveOptions', async (values: Partial<Record<OptionKey, string>>, within?: (trx: Transaction<Database>) => Promise<void>) => {
    const entries = Object.entries(values) as Array<[OptionKey, string]>
    await app.db.transaction().execute(async (trx) => {
      for (const [key, value] of entries) await upsertOption(trx, key, value)
      if (within !== undefined) await within(trx)
    })
    cached = undefined
    await app.publishChange({ kind: 'options', keys: entries.map(([k]) => k) })
  })
}, { name: 'options', dependencies: ['db', 'config-events'] })
