import { anthropicToChatRequest } from '@modelgate/providers'
import type { FastifyInstance } from 'fastify'
import { authenticate } from '../../relay/auth.js'
import { RelayError, RM } from '../../relay/errors.js'
import { exactCounter, promptTokensOf } from '../../relay/estimate.js'
import { relay } from '../../relay/pipeline.js'

/**
 * Anthropic's Messages API (Claude Code, @anthropic-ai/sdk): passed through to Claude channels,
 * converted to chat completions and back for the others. Refusals in Anthropic's shape.
 */
export default async function anthropicRoutes (api: FastifyInstance) {
  const deps = api.relayDeps
  const { callers } = deps

  api.post('/v1/messages', { config: { format: 'anthropic' } }, async (req, reply) => {
    const caller = await authenticate(callers, req)
    await relay(deps, req, reply, 'messages', caller, { format: 'anthropic' })
    return reply
  })

  api.post('/v1/messages/count_tokens', { config: { format: 'anthropic' } }, async (req) => {
    await authenticate(callers, req)
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body) || Buffer.isBuffer(req.body)) {
      throw new RelayError(400, 'invalid_request_error', 'invalid_body', RM.bodyNotObject)
    }
    // Counted with o200k on the chat form of the request (system, messages, tools): Anthropic's
    // own tokenizer is not public, so this is an estimate of the same order, not its count.
    return { input_tokens: promptTokensOf(anthropicToChatRequest(req.body as Record<string, unknown>), await exactCounter()) }
  })
}
