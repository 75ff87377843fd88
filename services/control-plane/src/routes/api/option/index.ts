import { OPTION_DEFAULTS, type OptionKey, SECRET_OPTIONS } from '@modelgate/contracts'
import { findAllOptions } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { fail, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { normaliseOption, OM, OptionError, PAYMENT_OPTIONS } from '../../../services/option-rules.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
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
    schema: { body: Type.Object({ key: Type.String({ maxLength: 64 }), value: Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Number(), Type.Boolean()]) }) }
  }, async (req) => {
    const { key } = req.body
    let value: string
    try {
      value = normaliseOption(key, String(req.body.value))
    } catch (err) {
      if (err instanceof OptionError) throw fail(err.msg, err.vars)
      throw err
    }
    if (PAYMENT_OPTIONS.has(key) && (await app.loadOptions()).str('ServerAddress') === '') throw fail(OM.serverAddressFirst)
    await app.saveOptions({ [key as OptionKey]: value })
    return ok({ key, value: SECRET_OPTIONS.has(key as OptionKey) ? '' : value }, req.t(M.saved))
  })

  // Restores the default model, completion and per-call prices.
  app.post('/rest_model_ratio', { config: { auth: 'root' } }, async (req) => {
    await app.saveOptions({ ModelRatio: OPTION_DEFAULTS.ModelRatio, CompletionRatio: OPTION_DEFAULTS.CompletionRatio, ModelPrice: OPTION_DEFAULTS.ModelPrice, CacheRatio: OPTION_DEFAULTS.CacheRatio, CreateCacheRatio: OPTION_DEFAULTS.CreateCacheRatio, AudioRatio: OPTION_DEFAULTS.AudioRatio, AudioCompletionRatio: OPTION_DEFAULTS.AudioCompletionRatio })
    return ok(null, req.t(M.saved))
  })
}
export default routes
