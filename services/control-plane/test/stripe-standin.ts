import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import Stripe from 'stripe'
import type { Test } from 'tap'

/*
 * A stand-in for Stripe on 127.0.0.1 for the control plane's tests: the API calls the product
 * makes, in Stripe's own shapes, and webhook deliveries signed by the stripe package's own helper.
 */

export const SECRET = 'sk_test_standin_0123456789abcdef'
export const WEBHOOK_SECRET = 'whsec_standin_fedcba9876543210'

/** A stand-in for Stripe's API on 127.0.0.1: the calls the product makes, in Stripe's own shapes. */
export interface StandIn {
  base: string
  /** Form bodies of the Checkout Sessions created, parsed. */
  sessions: Array<URLSearchParams & { id?: string }>
  ids: string[]
  /** Invoices by the payment intent that paid them, for `GET /v1/invoice_payments`. */
  invoicesPaidBy: Map<string, Record<string, unknown>>
  /** Query strings of the invoice payment lookups made. */
  lookups: URLSearchParams[]
}

export async function stripeStandIn (t: Test): Promise<StandIn> {
  const state: StandIn = { base: '', sessions: [], ids: [], invoicesPaidBy: new Map(), lookups: [] }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      if (req.method === 'GET' && req.url?.startsWith('/pay/') === true) {
        res.setHeader('content-type', 'text/html')
        res.end('<html><body><h1>Stand-in Stripe Checkout</h1></body></html>')
        return
      }
      const url = new URL(req.url ?? '/', 'http://stand.in')
      const known = (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') || (req.method === 'GET' && url.pathname === '/v1/invoice_payments')
      if (!known) {
        res.statusCode = 404
        res.end(JSON.stringify({ error: { message: `Unrecognized request URL (${req.method} ${req.url})`, type: 'invalid_request_error' } }))
        return
      }
      if (req.headers.authorization !== `Bearer ${SECRET}`) {
        res.statusCode = 401
        res.end(JSON.stringify({ error: { message: 'Invalid API Key provided: sk_test_****0000', type: 'invalid_request_error' } }))
        return
      }
      if (req.method === 'GET') {
        // The invoice payments of one payment intent, each with its invoice when expanded.
        state.lookups.push(url.searchParams)
        const pi = url.searchParams.get('payment[payment_intent]') ?? ''
        const invoice = url.searchParams.get('payment[type]') === 'payment_intent' ? state.invoicesPaidBy.get(pi) : undefined
        const expanded = url.searchParams.getAll('expand[0]').includes('data.invoice')
        const data = invoice === undefined
          ? []
          : [{ id: `inpay_${pi}`, object: 'invoice_payment', invoice: expanded ? invoice : invoice['id'], payment: { type: 'payment_intent', payment_intent: pi }, status: 'paid' }]
        res.end(JSON.stringify({ object: 'list', url: '/v1/invoice_payments', has_more: false, data }))
        return
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
      const id = `cs_test_${randomBytes(12).toString('hex')}`
      state.sessions.push(form)
      state.ids.push(id)
      res.end(JSON.stringify({ id, object: 'checkout.session', mode: form.get('mode') ?? 'payment', status: 'open', url: `${state.base}/pay/${id}` }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(() => new Promise<void>((resolve) => server.close(() => { resolve() })))
  return state
}

/** Delivers `payload` as Stripe does, signed by the package's own test helper. */
export async function deliver (app: FastifyInstance, payload: string, opts: { secret?: string, timestamp?: number, header?: string } = {}): Promise<number> {
  const header = opts.header ?? Stripe.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? WEBHOOK_SECRET, ...(opts.timestamp === undefined ? {} : { timestamp: opts.timestamp }) })
  const res = await app.inject({ method: 'POST', url: '/api/stripe/webhook', headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header }, payload })
  return res.statusCode
}
