import rateLimit from '@fastify/rate-limit'
import type { GatewayConfig } from '@modelgate/config'
import type { ClientFormat } from '@modelgate/providers'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { multipartBoundary, parseJsonBody } from '../relay/body-guards.js'
import { RelayError, relayMessage, RM, sendOpenAIError, unknownRelayPath } from '../relay/errors.js'
import { refusalBody } from '../relay/inbound.js'
import anthropicRoutes from './anthropic/index.js'
import billingRoutes from './billing/index.js'
import geminiRoutes from './gemini/index.js'
import midjourneyRoutes from './mj/index.js'
import openaiRoutes from './openai/index.js'
import playgroundRoutes from './playground/index.js'
import realtimeRoutes from './realtime/index.js'
import sunoRoutes from './suno/index.js'
import videoRoutes from './videos/index.js'

/** Path prefixes the gateway relays itself; everything else goes to the control plane. */
export const RELAY_PREFIXES = ['/v1', '/v1beta', '/pg', '/mj', '/fast/mj', '/relax/mj', '/turbo/mj', '/suno'] as const

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The protocol a relay route speaks, for its refusals; OpenAI's when absent. */
    format?: ClientFormat
  }
}

/**
 * The relay's routes, in one scope that parses their bodies, limits requests per address and
 * answers refusals in the caller's protocol: OpenAI-format endpoints under /v1 for relay keys,
 * Anthropic's and Gemini's APIs, the console playground under /pg for signed-in users, OpenAI's
 * billing endpoints, the Realtime API, the asynchronous tasks (Midjourney-Proxy, Suno, OpenAI's
 * videos), and an OpenAI-style 404 for any other relay path (never proxied). Each area works
 * with `app.relayDeps` (plugins/app/relay.ts).
 */
export default async function relayRoutes (api: FastifyInstance, opts: { config: Readonly<GatewayConfig> }) {
  const { config } = opts
  const bodyLimit = config.RELAY_BODY_LIMIT_MB * 1024 * 1024
  // Relay bodies are parsed here so malformed JSON gets OpenAI's error shape, not Fastify's.
  api.removeAllContentTypeParsers()
  // Bodies that are not UTF-8, nested deeper than MAX_JSON_DEPTH, with __proto__ /
  // constructor.prototype keys or with a routing key twice are refused here: before any
  // reservation or upstream call (parseJsonBody). Read as bytes, so bad UTF-8 is seen, not replaced.
  api.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'buffer', bodyLimit }, (_req, data, done) => {
    let body: unknown
    try {
      body = parseJsonBody(data as Buffer)
    } catch (err) {
      done(err as RelayError, undefined)
      return
    }
    done(null, body)
  })
  // A boundary longer than RFC 2046's 70 characters is refused before the body is looked at.
  api.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit }, (req, data, done) => {
    try {
      multipartBoundary(String(req.headers['content-type'] ?? ''))
    } catch (err) {
      done(err as RelayError, undefined)
      return
    }
    done(null, data)
  })
  api.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_req, data, done) => { done(null, data) })

  if (config.RELAY_RATE_LIMIT_PER_MINUTE > 0) {
    await api.register(rateLimit, {
      max: config.RELAY_RATE_LIMIT_PER_MINUTE,
      timeWindow: '1 minute',
      redis: api.redis,
      nameSpace: 'ratelimit:relay:',
      errorResponseBuilder: () => new RelayError(429, 'rate_limit_exceeded', 'rate_limit_exceeded', RM.rateLimited)
    })
  }

  // Refusals go out in the caller's protocol: OpenAI's error envelope, or Anthropic's on /v1/messages.
  const refuse = (req: FastifyRequest, reply: FastifyReply, status: number, error: { message: string, type: string, code: string | null }) => {
    const format = req.routeOptions.config.format ?? 'openai'
    if (format === 'openai') return sendOpenAIError(reply, status, error)
    return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(refusalBody(format, status, error))
  }
  api.setErrorHandler(async (err: FastifyError, req, reply) => {
    if (err instanceof RelayError) {
      if (err.headers !== undefined) void reply.headers(err.headers)
      return refuse(req, reply, err.status, { message: relayMessage(req, err), type: err.type, code: err.code })
    }
    const status = err.statusCode ?? 500
    if (status >= 500) req.log.error({ err }, 'relay error')
    return refuse(req, reply, status >= 500 ? 500 : status, {
      message: status >= 500 ? 'internal error' : err.message,
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      code: err.code ?? null
    })
  })

  await api.register(openaiRoutes)
  await api.register(anthropicRoutes)
  await api.register(geminiRoutes)
  await api.register(playgroundRoutes, { sessionSecret: config.SESSION_SECRET })
  await api.register(billingRoutes)
  await api.register(realtimeRoutes)
  // Each task protocol answers its refusals in its own shape (its own error handler).
  await api.register(midjourneyRoutes)
  await api.register(sunoRoutes)
  await api.register(videoRoutes)

  for (const prefix of RELAY_PREFIXES) {
    api.all(prefix, unknownRelayPath)
    api.all(`${prefix}/*`, unknownRelayPath)
  }
}
