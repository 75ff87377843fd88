import { PricingResponse, type PricingItem } from '@modelgate/contracts'
import { findServedModels } from '@modelgate/db'
import { priceOf, pricingTables } from '@modelgate/pricing'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { groupRatios, usableGroups } from '../../../services/groups.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  // Public like the pricing page; a signed-in caller also learns which groups are theirs to use.
  app.get('/', { config: { auth: 'public' }, schema: { response: { 200: PricingResponse } } }, async (req) => {
    const [options, served, caller] = await Promise.all([app.loadOptions(), findServedModels(app.db), app.optionalAuth(req)])
    const tables = pricingTables(options)
    const items: PricingItem[] = []
    for (const { model, groups } of served) {
      // The ratio tables apply per group at request time; here the base price (group ratio 1).
      const price = priceOf(tables, model, '')
      // Unpriced models are refused by the relay, so they are not on sale either.
      if (price === undefined) continue
      items.push(price.kind === 'per_call'
        ? { model_name: model, quota_type: 1, model_ratio: 0, completion_ratio: 0, model_price: price.modelPrice, enable_groups: groups }
        : { model_name: model, quota_type: 0, model_ratio: price.modelRatio, completion_ratio: price.completionRatio, model_price: -1, enable_groups: groups })
    }
    const usable = usableGroups(options, caller?.user.group)
    return {
      success: true as const,
      message: '',
      data: items,
      group_ratio: groupRatios(options),
      usable_group: Object.fromEntries(Object.entries(usable).map(([g, v]) => [g, v.desc]))
    }
  })
}
export default routes
