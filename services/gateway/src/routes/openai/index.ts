import type { Endpoint } from '@modelgate/providers'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { authenticate, callerModels } from '../../relay/auth.js'
import { sendOpenAIError } from '../../relay/errors.js'
import { relay } from '../../relay/pipeline.js'

const JSON_ENDPOINTS: Array<[string, Endpoint]> = [
  ['/v1/chat/completions', 'chat'],
  ['/v1/completions', 'completions'],
  ['/v1/embeddings', 'embeddings'],
  ['/v1/images/generations', 'images_generations'],
  ['/v1/audio/speech', 'audio_speech'],
  ['/v1/moderations', 'moderations'],
  ['/v1/rerank', 'rerank'],
  ['/v1/responses', 'responses']
]
const MULTIPART_ENDPOINTS: Array<[string, Endpoint]> = [
  ['/v1/images/edits', 'images_edits'],
  ['/v1/audio/transcriptions', 'audio_transcriptions'],
  ['/v1/audio/translations', 'audio_translations']
]

/** OpenAI's API under /v1 for relay keys: the relayed endpoints and the model list. */
export default async function openaiRoutes (api: FastifyInstance) {
  const deps = api.relayDeps
  const { callers } = deps

  const keyed = (endpoint: Endpoint) => async (req: FastifyRequest, reply: FastifyReply) => {
    const caller = await authenticate(callers, req)
    await relay(deps, req, reply, endpoint, caller)
    return reply
  }
  for (const [path, endpoint] of [...JSON_ENDPOINTS, ...MULTIPART_ENDPOINTS]) api.post(path, keyed(endpoint))

  const listModels = async (req: FastifyRequest) => {
    const caller = await authenticate(callers, req)
    return callerModels(caller, deps.state).map((id) => ({ id, object: 'model', created: 0, owned_by: 'modelgate' }))
  }
  // Anthropic's clients list models on the same path, telling themselves apart by their
  // anthropic-version header: they get Anthropic's list shape.
  api.get('/v1/models', async (req) => {
    const models = await listModels(req)
    if (typeof req.headers['anthropic-version'] !== 'string') return { object: 'list', data: models }
    const data = models.map((m) => ({ type: 'model', id: m.id, display_name: m.id, created_at: '1970-01-01T00:00:00Z' }))
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null }
  })
  api.get<{ Params: { model: string } }>('/v1/models/:model', async (req, reply) => {
    const found = (await listModels(req)).find((m) => m.id === req.params.model)
    if (found === undefined) {
      return sendOpenAIError(reply, 404, { message: `The model '${req.params.model}' does not exist`, type: 'invalid_request_error', code: 'model_not_found' })
    }
    return found
  })
}
