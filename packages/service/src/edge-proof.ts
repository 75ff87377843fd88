import { createHmac, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/**
 * The header the gateway sets on every request it forwards to the control plane, and strips from
 * what clients send: proof that the X-Forwarded-* headers beside it were written by the gateway.
 */
export const EDGE_PROOF_HEADER = 'x-modelgate-edge'

/** Headers the control plane believes only next to a valid proof. */
const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'] as const

/**
 * The proof's value for a deployment: a MAC of a fixed label under SESSION_SECRET, which the
 * gateway and the control plane share and no client knows. A request smuggled into the gateway's
 * connection to the control plane carries only bytes a client wrote, so it cannot carry this.
 */
export function edgeProof (sessionSecret: string): string {
  return createHmac('sha256', sessionSecret).update('modelgate edge proof v1').digest('base64url')
}

/**
 * Makes the control plane believe a client address, protocol or host only from the gateway: on
 * each request, before any other hook reads `request.ip`, `protocol` or `host`, the X-Forwarded-*
 * headers are dropped unless the request carries the deployment's proof (compared in constant
 * time); the proof itself is dropped either way. Without the headers the request counts as
 * coming from its socket address (TRUST_PROXY still decides which sockets may forward at all).
 * Register it on the root instance before every other plugin.
 */
export function requireEdgeProof (app: FastifyInstance, sessionSecret: string): void {
  const expected = Buffer.from(edgeProof(sessionSecret))
  app.addHook('onRequest', (req: FastifyRequest, _reply, done) => {
    const headers = req.raw.headers
    const proof = headers[EDGE_PROOF_HEADER]
    const valid = typeof proof === 'string' && proof.length === expected.length && timingSafeEqual(Buffer.from(proof, 'latin1'), expected)
    delete headers[EDGE_PROOF_HEADER]
    if (!valid) for (const name of FORWARDED_HEADERS) delete headers[name]
    done()
  })
}
