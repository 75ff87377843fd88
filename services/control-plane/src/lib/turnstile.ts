import type { FastifyInstance, FastifyRequest } from 'fastify'
import { fail } from './errors.js'
import { defineMessages } from './i18n.js'

export const TM = defineMessages({
  turnstileEmpty: { en: 'Turnstile token is empty; please retry in a few seconds', zh: 'Turnstile token 为空，请稍后重试' },
  turnstileFailed: { en: 'Turnstile verification failed; please refresh and retry', zh: 'Turnstile 校验失败，请刷新重试' }
})

/**
 * When TurnstileCheckEnabled, verifies the `turnstile` query parameter with the siteverify
 * endpoint (TURNSTILE_VERIFY_URL) and refuses the request unless it succeeds.
 */
export async function checkTurnstile (app: FastifyInstance, req: FastifyRequest, verifyUrl: string): Promise<void> {
  const options = await app.loadOptions()
  if (!options.bool('TurnstileCheckEnabled')) return
  const token = (req.query as Record<string, unknown> | undefined)?.['turnstile']
  if (typeof token !== 'string' || token === '') throw fail(TM.turnstileEmpty)
  let success = false
  try {
    const res = await app.outbound.fetch(verifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ secret: options.str('TurnstileSecretKey'), response: token, remoteip: req.ip }),
      signal: AbortSignal.timeout(10_000)
    })
    const body = await res.json() as { success?: unknown }
    success = res.ok && body.success === true
  } catch (err) {
    req.log.warn({ err }, 'turnstile verification request failed')
  }
  if (!success) throw fail(TM.turnstileFailed)
}
