import type { PricingItem, PricingResponse } from '@modelgate/contracts'
import { requestEnvelope } from '../../api/client'

/** `GET /api/pricing`: the models on sale, with the group ratios and the caller's usable groups next to `data`. */
export async function fetchPricing (): Promise<Pick<PricingResponse, 'data' | 'group_ratio' | 'usable_group'>> {
  const env = await requestEnvelope<PricingItem[]>('GET', '/api/pricing')
  return {
    data: env.data ?? [],
    group_ratio: (env['group_ratio'] ?? {}) as Record<string, number>,
    usable_group: (env['usable_group'] ?? {}) as Record<string, string>
  }
}
