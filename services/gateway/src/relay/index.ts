import cookie from '@fastify/cookie'
import jwt from '@fastify/jwt'
import rateLimit from '@fastify/rate-limit'
import type { GatewayConfig } from '@modelgate/config'
import { type ConfigChange, configChannel, revokedSessionKey } from '@modelgate/contracts'
import { findUserById } from '@modelgate/db'
import { anthropicToChatRequest, type ClientFormat, type Endpoint, geminiToChatRequest } from '@modelgate/providers'
import { bullConnection, redisCredentialStore, SecretBox } from '@modelgate/service'
import { QuotaStore } from '@modelgate/quota'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { authenticate, type Caller, checkGroup } from './auth.js'
import { billingRoutes } from './billing.js'
import { multipartBoundary, parseJsonBody } from './body-guards.js'
import { CallerCache } from './callers.js'
import { RelayError, relayMessage, RM, sendOpenAIError, unknownRelayPath } from './errors.js'
import { exactCounter, promptTokensOf } from './estimate.js'
import { refusalBody } from './inbound.js'
import { InFlightCalls, relay, type RelayDeps } from './pipeline.js'
import { realtimeRoutes } from './realtime.js'
import { taskRoutes } from '../tasks/index.js'
import { RelayState } from './state.js'
import { UsagePublisher } from './usage.js'

/** Path prefixes the gateway relays itself; everything else goes to the control plane. */
export const RELAY_PREFIXES = ['/v1', '/v1beta', '/pg', '/mj', '/fast/mj', '/relax/mj', '/turbo/mj', '/suno'] as const

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

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The protocol a relay route speaks, for its refusals; OpenAI's when absent. */
    format?: ClientFormat
  }
  interface FastifyInstance {
    relayState: RelayState
    usagePublisher: UsagePublisher
  }
}

/**
 * The relay: OpenAI-format endpoints under /v1 for relay keys, the console playground under /pg
 * for signed-in users, and an OpenAI-style 404 for any other relay path (never proxied).
 */
async function relayRoutes (app: FastifyInstance, opts: { config: Readonly<GatewayConfig> }) {
  const { config } = opts
  const box = new SecretBox(config.CRYPTO_SECRET)
  const publish = async (change: ConfigChange): Promise<void> => {
    await app.redis.publish(configChannel(config.REDIS_KEY_PREFIX), JSON.stringify(change))
  }
  // OAuth renewals (Claude Code, Codex) shared with the other replicas and written back to the channel.
  const credentials = redisCredentialStore({ redis: app.redis, db: app.db, box, log: app.log, publish })
  const state = new RelayState(app.db, box, app.log, credentials, app.outbound)
  await state.loadAll()
  const callers = new CallerCache(app.db, app.redis)
  state.onChange((change) => {
    if (change.kind === 'user') callers.forget({ userId: change.id })
    else if (change.kind === 'token') callers.forget({ tokenId: change.id })
  })
  // Token and user records held in memory are read again (from Redis, else Postgres) after each
  // full reload: a token disabled or a user banned while its change message was lost is refused
  // within STATE_REFRESH_MS, not only when the 60 s memory entry expires.
  state.onResync(() => { callers.clear() })
  const stopFollowing = await state.follow(app.redis, config.REDIS_KEY_PREFIX, config.STATE_REFRESH_MS)
  const usage = new UsagePublisher(bullConnection(config.REDIS_URL), `${config.REDIS_KEY_PREFIX}bull`, app.log)
  app.decorate('relayState', state)
  app.decorate('usagePublisher', usage)
  const quota = new QuotaStore(app.redis, { leaseMs: config.RELAY_LEASE_TTL_MS })
  // Shutdown: in-flight relays get DRAIN_TIMEOUT_MS to finish (Fastify waits for them before
  // onClose); the upstream calls still running then are cut, so their streams end with an error
  // event, are billed for what was sent, and their usage events go out before the process exits.
  const inFlight = new InFlightCalls()
  let drainTimer: NodeJS.Timeout | undefined
  app.addHook('preClose', (done) => {
    drainTimer = setTimeout(() => {
      if (inFlight.size > 0) app.log.warn({ streams: inFlight.size, drainMs: config.DRAIN_TIMEOUT_MS }, 'drain timeout: cutting the relays still running')
      inFlight.cutAll(new Error('the gateway is shutting down'))
    }, config.DRAIN_TIMEOUT_MS)
    drainTimer.unref()
    done()
  })
  // Close order: stop taking changes; in-flight relays finish before Fastify runs onClose.
  app.addHook('onClose', async () => {
    clearTimeout(drainTimer)
    await stopFollowing()
    await usage.close()
    quota.stopRenewing()
  })

  const deps: RelayDeps = {
    state,
    quota,
    usage,
    db: app.db,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    upstreamFirstByteTimeoutMs: config.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
    outbound: app.outbound,
    publishChannelChange: async (id) => { await publish({ kind: 'channel', id }) },
    inFlight
  }

  await app.register(async (api) => {
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
        redis: app.redis,
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

    const keyed = (endpoint: Endpoint) => async (req: FastifyRequest, reply: FastifyReply) => {
      const caller = await authenticate(callers, req)
      await relay(deps, req, reply, endpoint, caller)
      return reply
    }
    for (const [path, endpoint] of [...JSON_ENDPOINTS, ...MULTIPART_ENDPOINTS]) api.post(path, keyed(endpoint))

    // Anthropic's Messages API (Claude Code, @anthropic-ai/sdk): passed through to Claude
    // channels, converted to chat completions and back for the others.
    api.post('/v1/messages', { config: { format: 'anthropic' } }, async (req, reply) => {
      const caller = await authenticate(callers, req)
      await relay(deps, req, reply, 'messages', caller, { format: 'anthropic' })
      return reply
    })
    // Gemini's API (Google's SDKs): /v1beta/models/{model}:generateContent, :streamGenerateContent
    // (alt=sse or a JSON array), :countTokens, :embedContent and :batchEmbedContents, the key as
    // x-goog-api-key or ?key=.
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
    api.get('/v1beta/models', { config: { format: 'gemini' } }, async (req) => ({
      models: (await listModels(req)).map((m) => ({ name: `models/${m.id}`, displayName: m.id, supportedGenerationMethods: ['generateContent', 'countTokens'] }))
    }))

    api.post('/v1/messages/count_tokens', { config: { format: 'anthropic' } }, async (req) => {
      await authenticate(callers, req)
      if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body) || Buffer.isBuffer(req.body)) {
        throw new RelayError(400, 'invalid_request_error', 'invalid_body', RM.bodyNotObject)
      }
      // Counted with o200k on the chat form of the request (system, messages, tools): Anthropic's
      // own tokenizer is not public, so this is an estimate of the same order, not its count.
      return { input_tokens: promptTokensOf(anthropicToChatRequest(req.body as Record<string, unknown>), await exactCounter()) }
    })

    const listModels = async (req: FastifyRequest) => {
      const caller = await authenticate(callers, req)
      checkGroup(caller, state.usableGroups)
      const limits = caller.record.token.modelLimits
      const models = state.modelsOf(caller.group).filter((m) => limits === null || limits.includes(m))
      return models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'modelgate' }))
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

    // The console playground: the signed-in user's session (cookie + New-Api-User), billed to the user.
    await api.register(async (pg) => {
      await pg.register(cookie)
      await pg.register(jwt, { secret: config.SESSION_SECRET, cookie: { cookieName: 'session', signed: false } })
      pg.post('/pg/chat/completions', async (req, reply) => {
        const claims = await req.jwtVerify<{ uid: number, sv: number, jti: string }>({ onlyCookie: true }).catch(() => undefined)
        const user = claims === undefined ? undefined : await findUserById(app.db, claims.uid)
        const revoked = claims === undefined ? 0 : await app.redis.exists(revokedSessionKey(claims.jti))
        if (claims === undefined || user === undefined || user.session_version !== claims.sv || revoked === 1 || req.headers['new-api-user'] !== String(user.id)) {
          throw new RelayError(401, 'invalid_request_error', 'not_logged_in', RM.notLoggedIn)
        }
        if (user.status !== 1) throw new RelayError(403, 'invalid_request_error', 'user_banned', RM.userBanned)
        const body = req.body as Record<string, unknown> | undefined
        const group = typeof body?.['group'] === 'string' && body['group'] !== '' ? body['group'] : user.group
        const caller: Caller = {
          group,
          record: {
            token: {
              id: 0, name: 'playground', status: 1, remainQuota: 0, unlimited: true, expiredTime: -1, modelLimits: null, allowIps: [], group,
              rpmLimit: 0, tpmLimit: 0, concurrencyLimit: 0
            },
            user: { id: user.id, username: user.username, status: user.status, role: user.role, group: user.group, deleted: false, concurrencyLimit: user.concurrency_limit }
          }
        }
        if (body !== undefined) delete body['group']
        await relay(deps, req, reply, 'chat', caller)
        return reply
      })
    })

    billingRoutes(api, { callers, db: app.db, state })
    // OpenAI's Realtime API: GET /v1/realtime upgraded to a websocket, relayed to OpenAI or Azure.
    await realtimeRoutes(api, { ...deps, callers })
    // Asynchronous tasks: Midjourney-Proxy, Suno and OpenAI's video API.
    await taskRoutes(api, { ...deps, callers })

    for (const prefix of RELAY_PREFIXES) {
      api.all(prefix, unknownRelayPath)
      api.all(`${prefix}/*`, unknownRelayPath)
    }
  })
}

export default fp(relayRoutes, { name: 'relay', dependencies: ['db', 'redis'] })
