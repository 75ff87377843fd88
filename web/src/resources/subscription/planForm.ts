import type { DurationUnit, PlanBody, PlanEntry, QuotaType } from './types'

/** One entitlement row of the form; `key` tells the rows apart while they are added and removed. */
export interface ItemForm { key: number, model: string, kind: QuotaType, amount: string }

export interface PlanForm {
  title: string
  subtitle: string
  price: string
  currency: string
  unit: DurationUnit
  value: string
  custom: string
  sort: string
  enabled: boolean
  stripe: string
  creem: string
  items: ItemForm[]
}

/** A field's message key. */
export type PlanErrors = Partial<Record<Exclude<keyof PlanForm, 'items' | 'enabled'>, string>> & {
  items?: string
  /** By row: the model's and the amount's message keys. */
  rows?: Array<{ model?: string, amount?: string }>
}

export const ITEMS_MAX = 50
const AMOUNT_MAX = Number.MAX_SAFE_INTEGER

let nextKey = 1
export const newItem = (): ItemForm => ({ key: nextKey++, model: '', kind: 0, amount: '' })

/**
 * How quota amounts are typed: in dollars when the console shows quota as money
 * (quota_per_unit units a dollar), else in quota units, as the other quota fields do.
 */
export interface QuotaInput { dollars: boolean, perUnit: number }

export const amountOf = (units: number, kind: QuotaType, q: QuotaInput): string => kind === 0 && q.dollars ? String(units / q.perUnit) : String(units)

/** The typed amount as a whole count (quota units or requests); undefined unless positive. */
export function unitsOf (text: string, kind: QuotaType, q: QuotaInput): number | undefined {
  const s = text.trim()
  const money = kind === 0 && q.dollars
  if (money ? !/^\d+(\.\d+)?$/.test(s) : !/^\d+$/.test(s)) return undefined
  const n = money ? Math.round(Number(s) * q.perUnit) : Number(s)
  return Number.isSafeInteger(n) && n >= 1 && n <= AMOUNT_MAX ? n : undefined
}

export function emptyForm (): PlanForm {
  return { title: '', subtitle: '', price: '', currency: 'USD', unit: 'month', value: '1', custom: '2592000', sort: '0', enabled: true, stripe: '', creem: '', items: [newItem()] }
}

export function formOf ({ plan, items }: PlanEntry, q: QuotaInput): PlanForm {
  return {
    title: plan.title,
    subtitle: plan.subtitle,
    // Two decimals at most: the number's own text is exact enough (9.99 → "9.99").
    price: String(plan.price_amount),
    currency: plan.currency,
    unit: plan.duration_unit,
    value: String(plan.duration_value),
    custom: String(plan.custom_seconds),
    sort: String(plan.sort_order),
    enabled: plan.enabled,
    stripe: plan.stripe_price_id,
    creem: plan.creem_product_id,
    items: items.map((x) => ({ ...newItem(), model: x.model_name, kind: x.quota_type, amount: amountOf(x.amount_total, x.quota_type, q) }))
  }
}

const whole = (s: string): number | undefined => /^-?\d+$/.test(s.trim()) ? Number(s.trim()) : undefined

/** The form checked as the API checks it: the errors found, or the body to send. */
export function checkPlan (form: PlanForm, q: QuotaInput): { errors: PlanErrors, body?: PlanBody } {
  const errors: PlanErrors = {}
  const title = form.title.trim()
  if ([...title].length < 1 || [...title].length > 128) errors.title = 'subscription.form.titleInvalid'
  const price = form.price.trim()
  if (!/^\d+(\.\d{1,2})?$/.test(price)) errors.price = 'subscription.form.priceInvalid'
  const currency = form.currency.trim().toUpperCase()
  if (!/^[A-Z]{3}$/.test(currency)) errors.currency = 'subscription.form.currencyInvalid'
  const value = whole(form.value)
  const custom = whole(form.custom)
  if (form.unit === 'custom') {
    if (custom === undefined || custom < 60 || !Number.isSafeInteger(custom)) errors.custom = 'subscription.form.customSecondsInvalid'
  } else if (value === undefined || value < 1 || value > 1000) errors.value = 'subscription.form.valueInvalid'
  const sort = whole(form.sort)
  if (sort === undefined || !Number.isSafeInteger(sort)) errors.sort = 'subscription.form.sortInvalid'
  if (form.items.length < 1 || form.items.length > ITEMS_MAX) errors.items = 'subscription.form.itemsCount'

  const seen = new Set<string>()
  const rows = form.items.map((item) => {
    const row: { model?: string, amount?: string } = {}
    const model = item.model.trim()
    if (model === '') row.model = 'subscription.form.modelInvalid'
    else if (seen.has(`${item.kind}:${model}`)) row.model = 'subscription.form.duplicate'
    seen.add(`${item.kind}:${model}`)
    if (unitsOf(item.amount, item.kind, q) === undefined) row.amount = 'subscription.form.amountInvalid'
    return row
  })
  if (rows.some((r) => r.model !== undefined || r.amount !== undefined)) errors.rows = rows
  if (Object.keys(errors).length > 0) return { errors }
  return {
    errors,
    body: {
      plan: {
        title,
        subtitle: form.subtitle.trim(),
        price_amount: Number(price),
        currency,
        duration_unit: form.unit,
        duration_value: form.unit === 'custom' ? 1 : value!,
        custom_seconds: form.unit === 'custom' ? custom! : 0,
        enabled: form.enabled,
        sort_order: sort!,
        stripe_price_id: form.stripe.trim(),
        creem_product_id: form.creem.trim()
      },
      items: form.items.map((item) => ({ model_name: item.model.trim(), quota_type: item.kind, amount_total: unitsOf(item.amount, item.kind, q)! }))
    }
  }
}
