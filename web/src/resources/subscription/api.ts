import { get, post, put, request, requestEnvelope } from '../../api/client'
import type { BillingPreference, OfferedPlan, Plan, PlanBody, PlanEntry, SelfSubscriptions, SubscriptionEntry } from './types'

// Admin (admin and root).

/** Every plan with its items, by sort order (highest first). */
export async function listPlans (): Promise<PlanEntry[]> {
  return await get<PlanEntry[]>('/api/subscription/admin/plans')
}

export async function createPlan (body: PlanBody): Promise<PlanEntry> {
  return await post<PlanEntry>('/api/subscription/admin/plans', body)
}

/** Replaces the plan's fields and items; subscriptions already held keep their own copies. */
export async function updatePlan (id: number, body: PlanBody): Promise<PlanEntry> {
  return await put<PlanEntry>(`/api/subscription/admin/plans/${id}`, body)
}

export async function setPlanEnabled (id: number, enabled: boolean): Promise<Plan | PlanEntry | undefined> {
  return await request<Plan | PlanEntry | undefined>('PATCH', `/api/subscription/admin/plans/${id}`, { body: { enabled } })
}

/** Gives the user one period of the plan without payment (audited). */
export async function bindPlan (userId: number, planId: number): Promise<SubscriptionEntry> {
  return await post<SubscriptionEntry>('/api/subscription/admin/bind', { user_id: userId, plan_id: planId })
}

/** Every subscription of a user, active ones first. */
export async function userSubscriptions (userId: number): Promise<SubscriptionEntry[]> {
  return await get<SubscriptionEntry[]>(`/api/subscription/admin/users/${userId}/subscriptions`)
}

/** Ends a user's subscription now (audited). */
export async function invalidateSubscription (id: number): Promise<unknown> {
  return await post<unknown>(`/api/subscription/admin/user_subscriptions/${id}/invalidate`)
}

// The signed-in user.

/** The enabled plans, each with the ways the caller may pay for it. */
export async function offeredPlans (): Promise<OfferedPlan[]> {
  return await get<OfferedPlan[]>('/api/subscription/plans')
}

/** The caller's billing preference and subscriptions (active first, then the last 50 others). */
export async function mySubscriptions (): Promise<SelfSubscriptions> {
  return await get<SelfSubscriptions>('/api/subscription/self')
}

export async function setBillingPreference (preference: BillingPreference): Promise<{ billing_preference: BillingPreference }> {
  return await put<{ billing_preference: BillingPreference }>('/api/subscription/self/preference', { billing_preference: preference })
}

export async function setAutoRenew (id: number, autoRenew: boolean): Promise<unknown> {
  return await put<unknown>(`/api/subscription/self/${id}/auto_renew`, { auto_renew: autoRenew })
}

/** Pays the plan's quota price from the wallet; the subscription starts at once. */
export async function payWithBalance (planId: number): Promise<SubscriptionEntry> {
  return await post<SubscriptionEntry>('/api/subscription/balance/pay', { plan_id: planId })
}

/** The signed epay form for the plan (as the wallet's top-up answers it); undefined when the answer lacks the form or its address. */
export async function startEpay (planId: number, method: string): Promise<{ fields: Record<string, string>, url: string } | undefined> {
  const envelope = await requestEnvelope<Record<string, string>>('POST', '/api/subscription/epay/pay', { body: { plan_id: planId, payment_method: method } })
  const url = envelope['url']
  if (typeof url !== 'string' || url === '' || envelope.data === undefined) return undefined
  return { fields: envelope.data, url }
}

/** Starts a card checkout (Stripe or Creem) for the plan; the page to send the browser to. */
export async function startCheckout (provider: 'stripe' | 'creem', planId: number): Promise<string> {
  return (await post<{ pay_link: string }>(`/api/subscription/${provider}/pay`, { plan_id: planId, payment_method: provider })).pay_link
}
