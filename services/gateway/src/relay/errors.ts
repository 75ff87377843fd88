import type { FastifyReply, FastifyRequest } from 'fastify'

/** An error in the OpenAI wire format, which OpenAI SDKs parse and surface to the caller. */
export function sendOpenAIError (
  reply: FastifyReply,
  status: number,
  error: { message: string, type: string, code: string | null, param?: string | null }
): FastifyReply {
  return reply.code(status).send({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code } })
}

/** Unknown relay path: the same answer OpenAI gives for an endpoint it does not have. */
export async function unknownRelayPath (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const path = req.url.split('?')[0] ?? req.url
  return sendOpenAIError(reply, 404, {
    message: `Invalid URL (${req.method} ${path})`,
    type: 'invalid_request_error',
    code: 'unknown_url'
  })
}
