import type { FastifyInstance } from 'fastify'
import customRoutes from './custom.js'
import githubRoutes from './github.js'
import linuxdoRoutes from './linuxdo.js'
import stateRoutes from './state.js'
import telegramRoutes from './telegram.js'
import wechatRoutes from './wechat.js'

export interface OAuthRoutesOptions {
  githubOAuthUrl: string
  githubApiUrl: string
  linuxdoOAuthUrl: string
}

/**
 * OAuth sign-in and binding through GitHub, LinuxDO, WeChat, Telegram and the super admin's
 * OpenID Connect / OAuth 2.0 providers (email binding lives in email.ts).
 */
export default async function oauthRoutes (app: FastifyInstance, opts: OAuthRoutesOptions) {
  await app.register(stateRoutes)
  await app.register(githubRoutes, { oauthUrl: opts.githubOAuthUrl, apiUrl: opts.githubApiUrl })
  await app.register(linuxdoRoutes, { oauthUrl: opts.linuxdoOAuthUrl })
  await app.register(wechatRoutes)
  await app.register(telegramRoutes)
  // Parametric (/:slug): the fixed routes above win over it.
  await app.register(customRoutes)
}
