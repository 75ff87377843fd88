import { Outbound } from '@modelgate/providers'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    /** The outbound guard (SSRF policy) and connection pools of every upstream call this service makes. */
    outbound: Outbound
  }
}

/** The outbound variables of a service's config (packages/config). */
export interface OutboundConfig {
  OUTBOUND_PUBLIC_ONLY: boolean
  OUTBOUND_ALLOW: string
  OUTBOUND_DNS_SERVERS: string
}

const list = (text: string): string[] => text.split(',').map((s) => s.trim()).filter((s) => s !== '')

/** The guard a service's config describes. */
export function outboundFrom (config: OutboundConfig): Outbound {
  return new Outbound({ publicOnly: config.OUTBOUND_PUBLIC_ONLY, allow: list(config.OUTBOUND_ALLOW), dnsServers: list(config.OUTBOUND_DNS_SERVERS) })
}

/** Decorates `app.outbound` from the config; its pools close with the app. */
export const outboundPlugin = fp(async (app: FastifyInstance, opts: { config: OutboundConfig }) => {
  const outbound = outboundFrom(opts.config)
  app.decorate('outbound', outbound)
  app.addHook('onClose', async () => { await outbound.close() })
}, { name: 'outbound', fastify: '5.x' })
