import type { FastifyInstance } from 'fastify'
import { unknownRelayPath } from './errors.js'

/** Path prefixes the gateway relays itself; everything else goes to the control plane. */
export const RELAY_PREFIXES = ['/v1', '/v1beta', '/pg', '/mj', '/suno'] as const

/**
 * The relay namespace. Each prefix is claimed here so that a relay path never falls through to the
 * control plane; paths no relay route serves get the OpenAI "Invalid URL" error.
 */
export default async function relay (app: FastifyInstance) {
  for (const prefix of RELAY_PREFIXES) {
    app.all(prefix, unknownRelayPath)
    app.all(`${prefix}/*`, unknownRelayPath)
  }
}
