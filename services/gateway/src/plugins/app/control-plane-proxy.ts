import proxy from '@fastify/http-proxy'
import type { FastifyInstance } from 'fastify'

/**
 * Forwards every path the gateway does not serve itself (/api, the console and its assets) to the
 * control plane, so one address serves everything. The client's address (the socket's, or
 * what a load balancer listed in GATEWAY_TRUST_PROXY reported) goes along as the only X-Forwarded-For entry; the control plane trusts
 * it from the gateway only (TRUST_PROXY).
 */
export default async function controlPlaneProxy (app: FastifyInstance, opts: { upstream: string }) {
  await app.register(proxy, {
    upstream: opts.upstream,
    prefix: '/',
    rewritePrefix: '/',
    http: { requestOptions: { timeout: 60_000 } },
    replyOptions: {
      // The client's own X-Forwarded-For is dropped, not extended: the control plane trusts this
      // hop (TRUST_PROXY), so a chain the client wrote would let it pick the address that login
      // throttling and rate limits count (SEC-02).
      rewriteRequestHeaders: (req, headers) => {
        return {
          ...headers,
          'x-forwarded-for': req.ip,
          'x-forwarded-proto': req.protocol,
          'x-forwarded-host': req.headers.host ?? '',
          'x-request-id': req.id
        }
      },
      onError: (reply, { error }) => {
        reply.log.warn({ err: error }, 'control plane unreachable')
        void reply.code(502).send({ success: false, message: 'control plane unavailable' })
      }
    }
  })
}
