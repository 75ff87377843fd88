import {
  DURATION_UNITS,
  type DurationUnit,
  type OptionValues,
  type QuotaType,
  PLAN_LIMITS,
  quotaPrice,
  type SubscriptionPlanBody,
  type SubscriptionPlanEntry,
  type SubscriptionPlanItemView,
  type SubscriptionPlanOffer,
  type SubscriptionPlanView,
  type UserSubscriptionEntry
} from '@modelgate/contracts'
import {
  type Database,
  findSubscriptionPlan,
  insertSubscriptionPlan,
  listSubscriptionPlans,
  type PlanFields,
  type PlanItemFields,
  type PlanWithItems,
  replaceSubscriptionPlan,
  setSubscriptionPlanEnabled,
  type SubscriptionPlan,
  type SubscriptionWithItems,
  type Transaction
} from '@modelgate/db'
import { fail } from '../../lib/errors.js'
import { SM } from '../../lib/subscription-messages.js'
import type { Deps } from '../deps.js'
import { formatCents, MAX_CENTS, onlineTopUpReady, parseCents } from '../epay.js'
import { stripeTopUpReady } from '../stripe.js'

/** A price in minor units as new-api's `price_amount`, a decimal number in major units (999 → 9.99). */
export function priceAmount (minor: number): number {
  return Number(formatCents(BigInt(minor)))
}

/**
 * `price_amount` (a number or its text, major units, at most 2 decimals) in minor units, parsed
 * from the decimal text so no floating-point arithmetic touches the sum; undefined when it is not
 * one. A JSON number's shortest text form is exactly what the admin typed (9.99 stays "9.99").
 */
export function parsePriceAmount (value: number | string): bigint | undefined {
  if (typeof value === 'number' && (!Number.isFinite(value) || value < 0)) return undefined
  const text = typeof value === 'number' ? String(value) : value.trim()
  if (!/^\d+(\.\d{1,2})?$/.test(text)) return undefined
  return parseCents(text)
}

/** Whether Creem checkout can work: the API key, the webhook secret and the server address the return URL is built from. */
export function creemReady (options: OptionValues): boolean {
  return options.str('CreemApiKey') !== '' && options.str('CreemWebhookSecret') !== '' && options.str('ServerAddress') !== ''
}

export function planView (plan: SubscriptionPlan): SubscriptionPlanView {
  return {
    id: plan.id,
    title: plan.title,
    subtitle: plan.subtitle,
    price_amount: priceAmount(plan.price_minor),
    currency: plan.currency,
    duration_unit: plan.duration_unit,
    duration_value: plan.duration_value,
    custom_seconds: plan.custom_seconds,
    enabled: plan.enabled,
    sort_order: plan.sort_order,
    stripe_price_id: plan.stripe_price_id,
    creem_product_id: plan.creem_product_id,
    created_at: plan.created_at,
    updated_at: plan.updated_at
  }
}

export function planEntry ({ plan, items }: PlanWithItems): SubscriptionPlanEntry {
  return {
    plan: planView(plan),
    items: items.map((i): SubscriptionPlanItemView => ({ id: i.id, plan_id: i.plan_id, model_name: i.model_name, quota_type: i.quota_type, amount_total: i.amount_total }))
  }
}

/**
 * A user subscription as the API shows it. A period whose end has passed reads `expired` even
 * before the billing worker marks it so.
 */
export function subscriptionEntry ({ subscription: s, items }: SubscriptionWithItems, now = Math.floor(Date.now() / 1000)): UserSubscriptionEntry {
  return {
    subscription: {
      id: s.id,
      user_id: s.user_id,
      plan_id: s.plan_id,
      plan_title: s.plan_title,
      start_time: s.start_time,
      end_time: s.end_time,
      status: s.status === 'active' && s.end_time <= now ? 'expired' : s.status,
      source: s.source,
      auto_renew: s.auto_renew
    },
    items: items.map((i) => ({ id: i.id, model_name: i.model_name, quota_type: i.quota_type, amount_total: i.amount_total, amount_used: i.amount_used }))
  }
}

/**
 * The body of a create or replace as the stored fields, or a refusal with a clear message:
 * title 1..128, a known duration unit, duration 1..1000 (custom: at least 60 seconds), a price of
 * at least 0 with at most 2 decimals, a 3-letter currency (stored upper case), 1..50 items each
 * with a model, type 0 or 1 and a positive safe integer amount, no (model, type) twice.
 */
export function checkPlanBody (body: SubscriptionPlanBody): { fields: PlanFields, items: PlanItemFields[] } {
  const p = body.plan
  const title = p.title.trim()
  if (title.length < 1 || title.length > PLAN_LIMITS.titleMax) throw fail(SM.titleLength, { max: PLAN_LIMITS.titleMax })
  if (!(DURATION_UNITS as readonly string[]).includes(p.duration_unit)) throw fail(SM.durationUnit)
  const unit = p.duration_unit as DurationUnit
  let durationValue = p.duration_value ?? 1
  let customSeconds = p.custom_seconds ?? 0
  if (unit === 'custom') {
    if (!Number.isSafeInteger(customSeconds) || customSeconds < PLAN_LIMITS.customSecondsMin) throw fail(SM.customSeconds, { min: PLAN_LIMITS.customSecondsMin })
    durationValue = 1
  } else {
    if (!Number.isInteger(durationValue) || durationValue < 1 || durationValue > PLAN_LIMITS.durationValueMax) throw fail(SM.durationValue, { max: PLAN_LIMITS.durationValueMax })
    customSeconds = 0
  }
  const price = parsePriceAmount(p.price_amount)
  if (price === undefined) throw fail(SM.priceAmount)
  if (price > MAX_CENTS) throw fail(SM.priceTooHigh)
  const currency = (p.currency ?? 'USD').trim()
  if (!/^[A-Za-z]{3}$/.test(currency)) throw fail(SM.currency)

  if (body.items.length < PLAN_LIMITS.itemsMin || body.items.length > PLAN_LIMITS.itemsMax) throw fail(SM.itemsCount, { max: PLAN_LIMITS.itemsMax })
  const seen = new Set<string>()
  const items = body.items.map((i): PlanItemFields => {
    const model = i.model_name.trim()
    if (model === '') throw fail(SM.modelNameEmpty)
    if (i.quota_type !== 0 && i.quota_type !== 1) throw fail(SM.quotaType)
    if (!Number.isSafeInteger(i.amount_total) || i.amount_total < 1) throw fail(SM.amountTotal, { max: PLAN_LIMITS.amountTotalMax })
    const key = `${i.quota_type}\u0000${model}`
    if (seen.has(key)) throw fail(SM.duplicateItem, { model })
    seen.add(key)
    return { model_name: model, quota_type: i.quota_type as QuotaType, amount_total: i.amount_total }
  })
  return {
    fields: {
      title,
      subtitle: p.subtitle?.trim() ?? '',
      price_minor: Number(price),
      currency: currency.toUpperCase(),
      duration_unit: unit,
      duration_value: durationValue,
      custom_seconds: customSeconds,
      enabled: p.enabled ?? true,
      sort_order: p.sort_order ?? 0,
      stripe_price_id: p.stripe_price_id?.trim() ?? '',
      creem_product_id: p.creem_product_id?.trim() ?? ''
    },
    items
  }
}

/** Every plan, enabled or not (admins). */
export async function listPlansForAdmin (deps: Deps<'db'>): Promise<SubscriptionPlanEntry[]> {
  return (await listSubscriptionPlans(deps.db)).map(planEntry)
}

/** The plans users may buy, with how each may be paid and its price in quota units. */
export async function listPlanOffers (deps: Deps<'db' | 'loadOptions'>): Promise<SubscriptionPlanOffer[]> {
  const options = await deps.loadOptions()
  const epay = onlineTopUpReady(options)
  const stripe = stripeTopUpReady(options)
  const creem = creemReady(options)
  return (await listSubscriptionPlans(deps.db, { enabledOnly: true })).map((entry) => ({
    ...planEntry(entry),
    pay_methods: {
      balance: true,
      epay,
      stripe: stripe && entry.plan.stripe_price_id !== '',
      creem: creem && entry.plan.creem_product_id !== ''
    },
    quota_price: quotaPrice(options, entry.plan)
  }))
}

type Within = (trx: Transaction<Database>, before: PlanWithItems | undefined, after: PlanWithItems) => Promise<void>

/** Creates a plan from a checked body; `within` runs in the transaction (the audit entry). */
export async function createPlan (deps: Deps<'db'>, body: SubscriptionPlanBody, within?: Within): Promise<SubscriptionPlanEntry> {
  const { fields, items } = checkPlanBody(body)
  const created = await deps.db.transaction().execute(async (trx) => {
    const plan = await insertSubscriptionPlan(trx, fields, items)
    await within?.(trx, undefined, plan)
    return plan
  })
  return planEntry(created)
}

/** Replaces a plan's fields and items; held subscriptions keep the items they copied. */
export async function updatePlan (deps: Deps<'db'>, id: number, body: SubscriptionPlanBody, within?: Within): Promise<SubscriptionPlanEntry> {
  const { fields, items } = checkPlanBody(body)
  const updated = await deps.db.transaction().execute(async (trx) => {
    const before = await findSubscriptionPlan(trx, id)
    if (before === undefined) throw fail(SM.planNotFound)
    const after = await replaceSubscriptionPlan(trx, id, fields, items)
    if (after === undefined) throw fail(SM.planNotFound)
    await within?.(trx, before, after)
    return after
  })
  return planEntry(updated)
}

/** Enables or disables a plan (users can buy enabled plans only). */
export async function setPlanEnabled (deps: Deps<'db'>, id: number, enabled: boolean, within?: Within): Promise<SubscriptionPlanEntry> {
  const updated = await deps.db.transaction().execute(async (trx) => {
    const before = await findSubscriptionPlan(trx, id)
    if (before === undefined) throw fail(SM.planNotFound)
    const plan = await setSubscriptionPlanEnabled(trx, id, enabled)
    if (plan === undefined) throw fail(SM.planNotFound)
    const after = { plan, items: before.items }
    await within?.(trx, before, after)
    return after
  })
  return planEntry(updated)
}

/** The audit trail's view of a plan: its fields and items as the API shows them. */
export function planAudit (entry: PlanWithItems): Record<string, unknown> {
  const view = planEntry(entry)
  return { ...view.plan, items: view.items.map((i) => ({ model_name: i.model_name, quota_type: i.quota_type, amount_total: i.amount_total })) }
}
