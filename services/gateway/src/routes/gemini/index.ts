import { geminiToChatRequest } from '@modelgate/providers'
import type { FastifyInstance } from 'fastify'
import { authenticate, callerModels } from '../../relay/auth.js'
import { RelayError } from '../../relay/errors.js'
import { exactCounter, promptTokensOf } from '../../relay/estimate.js'
import { relay } from '../../relay/pipeline.js'

/**
 * Gemini's API (Google's SDKs): /v1beta/models/{model}:generateContent, :streamGenerateContent
 * (alt=sse or a JSON array), :countTokens, :embedContent and :batchEmbedContents, the key as
 * x-goog-api-key or ?key=, and the model list. Refusals in Gemini's shape.
 */
export default async function geminiRoutes (api: FastifyInstance) {
  const deps = api.relayDeps
  const { callers } = deps

  api.post<{ Params: { '*': string }, Querystring: { alt?: string } }>('/v1beta/models/*', { config: { format: 'gemini' } }, async (req, reply) => {
    const call = /^([^/:]+):(generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)$/.exec(req.params['*'])
    if (call === null) throw new RelayError(404, 'invalid_request_error', 'unknown_url', `Invalid URL (POST ${req.url.split('?')[0] ?? ''})`)
    const [, model = '', action] = call
    const caller = await authenticate(callers, req)
    if (action === 'countTokens') {
      const body = typeof req.body === 'object' && req.body !== null && !Buffer.isBuffer(req.body) ? req.body as Record<string, unknown> : {}
      const inner = body['generateContentRequest']
      const request = typeof inner === 'object' && inner !== null ? inner as Record<string, unknown> : body
      // o200k on the chat form of the request: an estimate of Gemini's count, not its own tokenizer.
      return { totalTokens: promptTokensOf(geminiToChatRequest(request, model, false), await exactCounter()) }
    }
    if (action === 'embedContent' || action === 'batchEmbedContents') {
      await relay(deps, req, reply, action === 'embedContent' ? 'embed_content' : 'batch_embed_contents', caller, { format: 'gemini', model, stream: false })
      return reply
    }
    const stream = action === 'streamGenerateContent'
    await relay(deps, req, reply, 'generate_content', caller, { format: 'gemini', model, stream, streamMode: req.query.alt === 'sse' ? 'sse' : 'json' })
    return reply
  })

  api.get('/v1beta/models', { config: { format: 'gemini' } }, async (req) => {
    const models = callerModels(await authenticate(callers, req), deps.state)
    return { models: models.map((id) => ({ name: `models/${id}`, displayName: id, supportedGenerationMethods: ['generateContent', 'countTokens'] })) }
  })
}
