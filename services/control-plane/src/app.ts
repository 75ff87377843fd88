import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { ControlPlaneConfig } from '@modelgate/config'
import { dbPlugin, healthPlugin, isStoreUnavailable, outboundPlugin, redisPlugin, requireEdgeProof, SecretBox } from '@modelgate/service'
import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import { CONSOLE_HEADERS } from './lib/console-headers.js'
import { ApiError } from './lib/errors.js'
import { M } from './lib/messages.js'
import authPlugin from './plugins/app/auth.js'
import configEventsPlugin from './plugins/app/config-events.js'
import customOAuthPlugin from './plugins/app/custom-oauth.js'
import i18nPlugin from './plugins/app/i18n.js'
import optionsPlugin from './plugins/app/options.js'
import rootUserPlugin from './plugins/app/root-user.js'
import twoFactorGatePlugin from './plugins/app/two-factor-gate.js'
import sessionPlugin from './plugins/external/session.js'
import groupRoutes from './routes/api/group/index.js'
import modelsRoutes from './routes/api/models/index.js'
import optionRoutes from './routes/api/option/index.js'
import oauthRoutes from './routes/api/oauth/index.js'
import statusRoutes, { contentRoutes } from './routes/api/status/index.js'
import stripeRoutes from './routes/api/stripe/index.js'
import creemRoutes from './routes/api/creem/index.js'
import userAdminRoutes from './routes/api/user/admin.js'
import userSelfRoutes from './routes/api/user/self.js'
import userSessionRoutes from './routes/api/user/session.js'
import userTwoFactorRoutes from './routes/api/user/two-factor.js'
import userPasskeyRoutes from './routes/api/user/passkey.js'
import verifyRoutes from './routes/api/verify/index.js'
import userSessionsRoutes from './routes/api/user/sessions.js'
import userRegisterRoutes from './routes/api/user/register.js'
import verificationRoutes from './routes/api/verification/index.js'
import emailBindRoutes from './routes/api/oauth/email.js'
import logRoutes from './routes/api/log/index.js'
import dataRoutes from './routes/api/data/index.js'
import usageRoutes from './routes/api/usage/index.js'
import tokenRoutes from './routes/api/token/index.js'
import redemptionRoutes from './routes/api/redemption/index.js'
import channelRoutes from './routes/api/channel/index.js'
import channelBalanceRoutes from './routes/api/channel/balance.js'
import channelKeyRoutes from './routes/api/channel/keys.js'
import auditRoutes from './routes/api/audit/index.js'
import customOAuthProviderRoutes from './routes/api/custom-oauth-provider/index.js'
import userOAuthBindingRoutes from './routes/api/user/oauth-bindings.js'
import topupRoutes from './routes/api/user/topup.js'
import checkinRoutes from './routes/api/user/checkin.js'
import pricingRoutes from './routes/api/pricing/index.js'
import { midjourneyRoutes, taskRoutes } from './routes/api/task/index.js'
import setupRoutes from './routes/api/setup/index.js'
import subscriptionRoutes from './routes/api/subscription/index.js'

const require = createRequire(import.meta.url)
const { version } = require('../package.json') as { version: string }

/** Where the built console lives: WEB_DIST_DIR, else the @modelgate/web workspace's dist. */
function webDistDir (config: ControlPlaneConfig): string | undefined {
  if (config.WEB_DIST_DIR !== undefined) return config.WEB_DIST_DIR
  try {
    return join(dirname(require.resolve('@modelgate/web/package.json')), 'dist')
  } catch {
    return undefined
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Seals and opens secrets at rest (token keys, channel keys) under CRYPTO_SECRET. */
    secrets: SecretBox
  }
}

export interface ControlPlaneOptions {
  config: Readonly<ControlPlaneConfig>
}

/** The whole control plane as one plugin: `/api` for the console, and the console itself. */
async function controlPlane (app: FastifyInstance, { config }: ControlPlaneOptions) {
  const startTime = Math.floor(Date.now() / 1000)
  // First of all hooks: X-Forwarded-* count only on requests the gateway forwarded (SEC-02).
  requireEdgeProof(app, config.SESSION_SECRET)
  await app.register(dbPlugin, { url: config.DATABASE_URL, applicationName: 'control-plane', max: config.PG_POOL_MAX, migrate: config.MIGRATE_ON_START })
  await app.register(redisPlugin, { url: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX })
  await app.register(healthPlugin, {})
  await app.register(outboundPlugin, { config })
  app.decorate('secrets', new SecretBox(config.CRYPTO_SECRET))
  await app.register(sessionPlugin, { secret: config.SESSION_SECRET, ttlHours: config.SESSION_TTL_HOURS })
  await app.register(i18nPlugin)
  await app.register(configEventsPlugin, { keyPrefix: config.REDIS_KEY_PREFIX })
  await app.register(optionsPlugin)
  await app.register(customOAuthPlugin)
  await app.register(rootUserPlugin, { initialPassword: config.INITIAL_ROOT_PASSWORD })
  await app.register(authPlugin, { ttlHours: config.SESSION_TTL_HOURS, cryptoSecret: config.CRYPTO_SECRET })
  // After auth's hook (it sets req.auth): admins without 2FA while TwoFactorRequiredForAdmins is on.
  await app.register(twoFactorGatePlugin)
  // Limits hold across replicas because the counters live in Redis.
  await app.register(rateLimit, {
    global: false,
    redis: app.redis,
    nameSpace: 'ratelimit:',
    errorResponseBuilder: () => new ApiError(429, M.tooManyRequests)
  })

  await app.register(async (api) => {
    // Set before the routes: child contexts take the handlers that exist when they register.
    api.setNotFoundHandler(async (req, reply) => await reply.code(404).send({ success: false, message: req.t(M.notFound) }))
    api.setErrorHandler(async (err: FastifyError, req, reply) => {
      if (err instanceof ApiError) {
        if (err.headers !== undefined) void reply.headers(err.headers)
        if (err.status === 401 && req.routeOptions.url !== '/api/user/logout') reply.header('cache-control', 'no-store')
        return await reply.code(err.status).send({ success: false, message: req.t(err.msg, err.vars), ...(err.data !== undefined ? { data: err.data } : {}) })
      }
      const status = err.statusCode ?? 500
      if (status >= 500 && isStoreUnavailable(err)) {
        // Postgres or Redis away (REL-37): retryable, and the driver's text stays in the log.
        req.log.warn({ err }, 'console API: data store unavailable')
        return await reply.code(503).header('retry-after', '5').send({ success: false, message: req.t(M.storeUnavailable) })
      }
      if (status >= 500) {
        req.log.error({ err }, 'console API error')
        return await reply.code(500).send({ success: false, message: req.t(M.internal) })
      }
      if (err.validation !== undefined) {
        return await reply.code(400).send({ success: false, message: req.t(M.invalidParameterDetail, { detail: err.message }) })
      }
      return await reply.code(status).send({ success: false, message: status === 429 ? req.t(M.tooManyRequests) : err.message })
    })
    await api.register(statusRoutes, { prefix: '/status', version, startTime })
    await api.register(setupRoutes, { prefix: '/setup' })
    await api.register(contentRoutes)
    await api.register(userSessionRoutes, { prefix: '/user', turnstileVerifyUrl: config.TURNSTILE_VERIFY_URL })
    await api.register(userSelfRoutes, { prefix: '/user' })
    await api.register(userTwoFactorRoutes, { prefix: '/user' })
    await api.register(userPasskeyRoutes, { prefix: '/user' })
    await api.register(verifyRoutes, { prefix: '/verify' })
    await api.register(userSessionsRoutes, { prefix: '/user' })
    await api.register(userAdminRoutes, { prefix: '/user' })
    await api.register(groupRoutes, { prefix: '/group' })
    await api.register(optionRoutes, { prefix: '/option' })
    await api.register(modelsRoutes, { prefix: '/models' })
    await api.register(oauthRoutes, { prefix: '/oauth', githubOAuthUrl: config.GITHUB_OAUTH_URL, githubApiUrl: config.GITHUB_API_URL, linuxdoOAuthUrl: config.LINUXDO_OAUTH_URL })
    await api.register(userRegisterRoutes, { prefix: '/user', turnstileVerifyUrl: config.TURNSTILE_VERIFY_URL })
    await api.register(verificationRoutes, { turnstileVerifyUrl: config.TURNSTILE_VERIFY_URL })
    await api.register(emailBindRoutes, { prefix: '/oauth/email' })
    await api.register(logRoutes, { prefix: '/log' })
    await api.register(dataRoutes, { prefix: '/data' })
    await api.register(tokenRoutes, { prefix: '/token' })
    await api.register(redemptionRoutes, { prefix: '/redemption' })
    await api.register(channelRoutes, { prefix: '/channel' })
    await api.register(channelBalanceRoutes, { prefix: '/channel' })
    await api.register(channelKeyRoutes, { prefix: '/channel' })
    await api.register(auditRoutes, { prefix: '/audit' })
    await api.register(customOAuthProviderRoutes, { prefix: '/custom-oauth-provider' })
    await api.register(userOAuthBindingRoutes, { prefix: '/user' })
    await api.register(topupRoutes, { prefix: '/user' })
    await api.register(stripeRoutes, { prefix: '/stripe' })
    await api.register(creemRoutes, { prefix: '/creem' })
    await api.register(checkinRoutes, { prefix: '/user', turnstileVerifyUrl: config.TURNSTILE_VERIFY_URL })
    await api.register(pricingRoutes, { prefix: '/pricing' })
    await api.register(subscriptionRoutes, { prefix: '/subscription' })
    await api.register(midjourneyRoutes, { prefix: '/mj' })
    await api.register(taskRoutes, { prefix: '/task' })
    await api.register(usageRoutes, { prefix: '/usage', redisUrl: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX })
  }, { prefix: '/api' })

  const dist = webDistDir(config)
  if (dist !== undefined && existsSync(join(dist, 'index.html'))) {
    await app.register(fastifyStatic, {
      root: dist,
      wildcard: false,
      index: ['index.html'],
      maxAge: '1h',
      immutable: false,
      setHeaders: (reply) => { void reply.headers(CONSOLE_HEADERS) }
    })
    // Client-side routes (/token, /log, ...) all load the single-page console.
    app.setNotFoundHandler(async (req, reply) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return await reply.code(404).send({ success: false, message: req.t(M.notFound) })
      return await reply.headers(CONSOLE_HEADERS).header('cache-control', 'no-cache').sendFile('index.html')
    })
  } else {
    app.log.warn({ dist }, 'console build not found; serving the API only (run npm run build)')
  }
}

// Not encapsulated: the service's decorators (db, redis, ...) are visible to whoever registers it.
export default fp(controlPlane, { name: 'control-plane-app', fastify: '5.x' })
