import proxy from '@fastify/http-proxy'
import type { FastifyInstance } from 'fastify'

/**
 * Forwards every path the gateway does not serve itself (/api, the console and its assets) to the
 * control plane, so one address serves everything. The client's address goes along in
 * X-Forwarded-For; the control plane trusts it from the gateway only (TRUST_PROXY).
 */
export default async function controlPlaneProxy (app: FastifyInstance, opts: { upstream: string }) {
  await app.register(proxy, {
    upstream: opts.upstream,
    prefix: '/',
    rewritePrefix: '/',
    http: { requestOptions: { timeout: 60_000 } },
    replyOptions: {
      rewriteRequestHeaders: (req, headers) => {
        const prior = req.headers['x-forwarded-for']
        return {
          ...headers,
          'x-forwarded-for': prior === undefined ? req.ip : `${String(prior)}, ${req.ip}`,
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
