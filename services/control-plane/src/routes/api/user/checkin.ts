import { CheckinQuery, CheckinResponse, CheckinStatusResponse } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { CM } from '../../../lib/checkin-messages.js'
import { fail, ok } from '../../../lib/errors.js'
import { perUserPerMinute } from '../../../lib/rate-limits.js'
import { checkTurnstile } from '../../../lib/turnstile.js'
import { checkIn, checkinSettings, checkinStatus } from '../../../services/checkin.js'
import { describeQuota } from '../../../services/redemptions.js'

const CHECKIN_RATE_LIMIT = perUserPerMinute(30)

/** new-api's daily check-in (docs/domain.md, "Daily check-in"): the user's records and the check-in itself. */
const routes: FastifyPluginAsyncTypebox<{ turnstileVerifyUrl: string }> = async (app, opts) => {
  const deps = { db: app.db, quota: app.quota, publishChange: app.publishChange, loadOptions: app.loadOptions }

  app.get('/checkin', {
    config: { auth: 'user' },
    schema: { querystring: CheckinQuery, response: { 200: CheckinStatusResponse } }
  }, async (req) => ok(await checkinStatus(deps, req.auth!.user, req.query.month)))

  app.post('/checkin', {
    config: { auth: 'user', rateLimit: CHECKIN_RATE_LIMIT },
    schema: { querystring: Type.Object({ turnstile: Type.Optional(Type.String()) }), response: { 200: CheckinResponse } }
  }, async (req) => {
    const options = await app.loadOptions()
    // Refused before Turnstile: a switched-off feature needs no challenge (nor a call to siteverify).
    if (!checkinSettings(options).enabled) throw fail(CM.checkinDisabled)
    await checkTurnstile(app, req, opts.turnstileVerifyUrl)
    const result = await checkIn(deps, req.auth!.user)
    return ok(result, req.t(CM.checkedIn, { quota: describeQuota(options, result.quota_awarded) }))
  })
}
export default routes
