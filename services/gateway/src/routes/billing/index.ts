import { keyBillingFigures, keyUsage } from '@modelgate/service'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { authenticate } from '../../relay/auth.js'
import { RelayError, RM } from '../../relay/errors.js'

/**
 * OpenAI's old billing endpoints, which third-party chat clients call with the relay key to show
 * its balance: `GET /v1/dashboard/billing/subscription` (the grant as hard_limit_usd) and
 * `GET /v1/dashboard/billing/usage` (what was spent, in cents), also without `/v1`.
 */
export default async function billingRoutes (api: FastifyInstance) {
  const deps = api.relayDeps
  const figures = async (req: FastifyRequest) => {
    const caller = await authenticate(deps.callers, req)
    const usage = await keyUsage(deps.db, { tokenId: caller.record.token.id })
    if (usage === undefined) throw new RelayError(401, 'invalid_request_error', 'invalid_api_key', RM.invalidKey)
    return keyBillingFigures(usage, deps.state.options)
  }
  for (const base of ['/v1/dashboard/billing', '/dashboard/billing']) {
    api.get(`${base}/subscription`, async (req) => {
      const f = await figures(req)
      return {
        object: 'billing_subscription',
        has_payment_method: true,
        soft_limit_usd: f.granted,
        hard_limit_usd: f.granted,
        system_hard_limit_usd: f.granted,
        access_until: f.accessUntil
      }
    })
    api.get(`${base}/usage`, async (req) => {
      const f = await figures(req)
      return { object: 'list', total_usage: f.used * 100 }
    })
  }
}
