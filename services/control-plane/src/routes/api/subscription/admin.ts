import {
  SubscriptionBindBody,
  SubscriptionIdParams,
  SubscriptionPlanBody,
  SubscriptionPlanEnabledBody,
  SubscriptionPlanEntryResponse,
  SubscriptionPlanListResponse,
  UserSubscriptionEntryResponse,
  UserSubscriptionListResponse
} from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ok } from '../../../lib/errors.js'
import { SM } from '../../../lib/subscription-messages.js'
import { recordAudit } from '../../../services/audit.js'
import { bindPlan, invalidateSubscription, listSubscriptionsOfUser } from '../../../services/subscriptions/admin.js'
import { createPlan, listPlansForAdmin, planAudit, setPlanEnabled, updatePlan } from '../../../services/subscriptions/plans.js'

/** The admins' side of subscription plans (docs/domain.md, "Subscription plans"); every change is audited. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, quota: app.quota, publishChange: app.publishChange }

  app.get('/plans', {
    config: { auth: 'admin' },
    schema: { response: { 200: SubscriptionPlanListResponse } }
  }, async () => ok(await listPlansForAdmin(deps)))

  app.post('/plans', {
    config: { auth: 'admin' },
    schema: { body: SubscriptionPlanBody, response: { 200: SubscriptionPlanEntryResponse } }
  }, async (req) => {
    const entry = await createPlan(deps, req.body, async (trx, _before, after) => {
      await recordAudit(deps, req, { action: 'subscription_plan.create', targetType: 'subscription_plan', targetId: after.plan.id, after: planAudit(after) }, trx)
    })
    return ok(entry, req.t(SM.planCreated))
  })

  app.put('/plans/:id', {
    config: { auth: 'admin' },
    schema: { params: SubscriptionIdParams, body: SubscriptionPlanBody, response: { 200: SubscriptionPlanEntryResponse } }
  }, async (req) => {
    const entry = await updatePlan(deps, req.params.id, req.body, async (trx, before, after) => {
      await recordAudit(deps, req, { action: 'subscription_plan.update', targetType: 'subscription_plan', targetId: after.plan.id, before: before === undefined ? undefined : planAudit(before), after: planAudit(after) }, trx)
    })
    return ok(entry, req.t(SM.planUpdated))
  })

  app.patch('/plans/:id', {
    config: { auth: 'admin' },
    schema: { params: SubscriptionIdParams, body: SubscriptionPlanEnabledBody, response: { 200: SubscriptionPlanEntryResponse } }
  }, async (req) => {
    const entry = await setPlanEnabled(deps, req.params.id, req.body.enabled, async (trx, before, after) => {
      await recordAudit(deps, req, {
        action: req.body.enabled ? 'subscription_plan.enable' : 'subscription_plan.disable',
        targetType: 'subscription_plan',
        targetId: after.plan.id,
        before: { enabled: before?.plan.enabled },
        after: { enabled: after.plan.enabled }
      }, trx)
    })
    return ok(entry, req.t(req.body.enabled ? SM.planEnabled : SM.planDisabled))
  })

  app.post('/bind', {
    config: { auth: 'admin' },
    schema: { body: SubscriptionBindBody, response: { 200: UserSubscriptionEntryResponse } }
  }, async (req) => {
    const { entry, user } = await bindPlan(deps, req.body.user_id, req.body.plan_id, async (trx, done) => {
      const s = done.subscription
      await recordAudit(deps, req, {
        action: 'subscription.bind',
        targetType: 'user_subscription',
        targetId: s.id,
        after: { user_id: s.user_id, plan_id: s.plan_id, plan_title: s.plan_title, start_time: s.start_time, end_time: s.end_time, source: s.source, status: s.status },
        note: `plan ${s.plan_id} (${s.plan_title}) given to user ${s.user_id} without payment`
      }, trx)
    })
    return ok(entry, req.t(SM.subscriptionBound, { plan: entry.subscription.plan_title, username: user.username }))
  })

  app.get('/users/:id/subscriptions', {
    config: { auth: 'admin' },
    schema: { params: SubscriptionIdParams, response: { 200: UserSubscriptionListResponse } }
  }, async (req) => ok(await listSubscriptionsOfUser(deps, req.params.id)))

  app.post('/user_subscriptions/:id/invalidate', {
    config: { auth: 'admin' },
    schema: { params: SubscriptionIdParams, response: { 200: UserSubscriptionEntryResponse } }
  }, async (req) => {
    const entry = await invalidateSubscription(deps, req.params.id, async (trx, done) => {
      await recordAudit(deps, req, {
        action: 'subscription.invalidate',
        targetType: 'user_subscription',
        targetId: done.subscription.id,
        before: { status: 'active' },
        after: { status: done.subscription.status },
        note: `subscription ${done.subscription.id} of user ${done.subscription.user_id} (plan ${done.subscription.plan_title}) cancelled`
      }, trx)
    })
    return ok(entry, req.t(SM.subscriptionInvalidated))
  })
}
export default routes
