import { OPTION_DEFAULTS, type OptionKey, SECRET_OPTIONS } from '@modelgate/contracts'
import { findAllOptions } from '@modelgate/db'
import type { Outbound } from '@modelgate/providers'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { fail, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { checkOptionAgainst, isSecretPlaceholder, normaliseOption, OM, OptionError, PAYMENT_OPTIONS } from '../../../services/option-rules.js'
import { checkOutbound, OBM } from '../../../lib/outbound.js'
import { requireFreshVerification } from '../../../services/secure-verify.js'
import { optionAuditor } from '../../../services/audit-targets.js'

/** Options whose address this server connects to: checked like a channel's base URL. */
const CONNECTED_TO: ReadonlySet<string> = new Set(['WeChatServerAddress', 'WorkerUrl', 'StripeApiBase', 'CreemApiBase'])
/** Addresses only browsers or the payment provider are sent to: a metadata address is still refused. */
const LINKED_TO: ReadonlySet<string> = new Set(['ServerAddress', 'PayAddress', 'CustomCallbackAddress'])

/** The outbound guard (SSRF) on an address option before it is saved. */
async function checkOptionTarget (outbound: Outbound, key: string, value: string): Promise<void> {
  if (CONNECTED_TO.has(key)) await checkOutbound(outbound, { url: value })
  else if (key === 'SMTPServer') await checkOutbound(outbound, { host: value })
  else if (LINKED_TO.has(key)) {
    const refusal = outbound.staticRefusal(new URL(value).hostname)
    if (refusal?.reason === 'metadata') throw fail(OBM.metadata, { host: refusal.host })
  }
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis }
  // Every option with its current value; credentials only say whether they are set.
  app.get('/', { config: { auth: 'root' } }, async () => {
    const stored = await findAllOptions(app.db)
    const items = (Object.keys(OPTION_DEFAULTS) as OptionKey[]).map((key) => {
      const value = stored.get(key) ?? OPTION_DEFAULTS[key]
      return SECRET_OPTIONS.has(key) ? { key, value: '', secret: true, is_set: value !== '' } : { key, value }
    })
    return ok(items)
  })

  app.put('/', {
    config: { auth: 'root' },
    schema: {
      body: Type.Object({
        key: Type.String({ maxLength: 64 }),
        value: Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Number(), Type.Boolean()]),
        /** Removes a credential (a blank or masked value keeps it). */
        clear: Type.Optional(Type.Boolean())
      })
    }
  }, async (req) => {
    const { key } = req.body
    // Credentials are write-only: a form saved whole sends back the blank or mask it read.
    if (SECRET_OPTIONS.has(key as OptionKey)) {
      // Replacing or removing a credential needs a fresh secure verification; the blank or
      // mask a form sends back changes nothing and passes.
      if (req.body.clear === true || !isSecretPlaceholder(String(req.body.value))) await requireFreshVerification(deps, req)
      if (req.body.clear === true) {
        const values = { [key as OptionKey]: '' }
        await app.saveOptions(values, await optionAuditor(deps, req, values, 'cleared'))
        return ok({ key, value: '' }, req.t(M.saved))
      }
      if (isSecretPlaceholder(String(req.body.value))) return ok({ key, value: '' }, req.t(M.saved))
    } else if (req.body.clear === true) {
      throw fail(OM.clearNotSecret, { key })
    }
    let value: string
    try {
      value = normaliseOption(key, String(req.body.value))
      checkOptionAgainst(key, value, await app.loadOptions())
    } catch (err) {
      if (err instanceof OptionError) throw fail(err.msg, err.vars)
      throw err
    }
    if (value !== '') await checkOptionTarget(app.outbound, key, value)
    if (PAYMENT_OPTIONS.has(key) && (await app.loadOptions()).str('ServerAddress') === '') throw fail(OM.serverAddressFirst)
    const values = { [key as OptionKey]: value }
    await app.saveOptions(values, await optionAuditor(deps, req, values))
    return ok({ key, value: SECRET_OPTIONS.has(key as OptionKey) ? '' : value }, req.t(M.saved))
  })

  // Restores the default model, completion and per-call prices.
  app.post('/rest_model_ratio', { config: { auth: 'root' } }, async (req) => {
    const values = { ModelRatio: OPTION_DEFAULTS.ModelRatio, CompletionRatio: OPTION_DEFAULTS.CompletionRatio, ModelPrice: OPTION_DEFAULTS.ModelPrice, CacheRatio: OPTION_DEFAULTS.CacheRatio, CreateCacheRatio: OPTION_DEFAULTS.CreateCacheRatio, AudioRatio: OPTION_DEFAULTS.AudioRatio, AudioCompletionRatio: OPTION_DEFAULTS.AudioCompletionRatio }
    await app.saveOptions(values, await optionAuditor(deps, req, values, 'prices reset to the defaults'))
    return ok(null, req.t(M.saved))
  })
}
export default routes
