import type { CheckinResult, CheckinStatusView, PaymentMethod } from '@modelgate/contracts'
import { get, post, requestEnvelope } from '../../api/client'

/** Redeems a code; answers the quota units added to the balance. */
export async function redeemCode (key: string): Promise<number> {
  return await post<number>('/api/user/topup', { key })
}

/** The sum to pay (two decimals, e.g. "7.30") for `amount` top-up units. */
export async function quoteTopUp (amount: number): Promise<string> {
  return await post<string>('/api/user/amount', { amount, top_up_code: '' })
}

/** The signed payment form: its fields and the provider page to post them to; undefined when the answer lacks either. */
export async function startPayment (amount: number, method: PaymentMethod): Promise<{ fields: Record<string, string>, url: string } | undefined> {
  const envelope = await requestEnvelope<Record<string, string>>('POST', '/api/user/pay', { body: { amount, top_up_code: '', payment_method: method } })
  const url = envelope['url']
  if (typeof url !== 'string' || url === '' || envelope.data === undefined) return undefined
  return { fields: envelope.data, url }
}

/**
 * Posts `fields` to `url` as an ordinary HTML form: the payment provider expects a browser
 * navigation carrying the signed form, not a script request.
 */
export function submitPaymentForm (url: string, fields: Record<string, string>): void {
  const form = document.createElement('form')
  form.method = 'POST'
  form.action = url
  form.style.display = 'none'
  for (const [name, value] of Object.entries(fields)) {
    const input = document.createElement('input')
    input.type = 'hidden'
    input.name = name
    input.value = value
    form.appendChild(input)
  }
  document.body.appendChild(form)
  form.submit()
  form.remove()
}

/** The sum to pay by card (Stripe), in the Stripe currency, for `amount` top-up units. */
export async function quoteStripeTopUp (amount: number): Promise<string> {
  return await post<string>('/api/user/stripe/amount', { amount })
}

/** Creates the order and its Stripe Checkout Session; answers the page to send the browser to. */
export async function startStripePayment (amount: number): Promise<string> {
  return (await post<{ pay_link: string }>('/api/user/stripe/pay', { amount, payment_method: 'stripe' })).pay_link
}

/** The daily check-in's settings and the caller's check-ins of `month` ('YYYY-MM', default the current UTC month). */
export async function getCheckin (month?: string): Promise<CheckinStatusView> {
  return await get<CheckinStatusView>('/api/user/checkin', { month })
}

/** Checks in for today (UTC); `turnstile` is the widget's token ('' when the check is off). */
export async function checkIn (turnstile: string): Promise<CheckinResult> {
  return await post<CheckinResult>('/api/user/checkin', {}, { turnstile })
}
