import type { IncomingHttpHeaders } from 'node:http'
import { EDGE_PROOF_HEADER } from '@modelgate/service'
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { Pool } from 'undici'

/** Largest request body forwarded to the control plane (the console's uploads are far smaller). */
export const CONSOLE_BODY_LIMIT = 16 * 1024 * 1024
/** How long the control plane has to start answering, and between two chunks of its answer. */
const CONTROL_PLANE_TIMEOUT_MS = 60_000
/** Unreachable-control-plane warnings are written at most this often (it restarts, it deploys). */
const WARN_EVERY_MS = 30_000

/**
 * Request headers that describe one hop's connection or framing, not the request: never copied.
 * The outbound request's framing (Content-Length) comes from the bytes actually sent, nothing else.
 */
const HOP_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te', 'trailer',
  'upgrade', 'expect', 'content-length', 'host', 'http2-settings',
  // The gateway's own statements about the client, written fresh below, never the client's.
  'forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'x-real-ip',
  'x-request-id', EDGE_PROOF_HEADER
])
/** Response headers of the control plane's hop that Node writes for the client's own connection. */
const HOP_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade'])

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

export interface ControlPlaneProxyOptions {
  /** The control plane's base URL (CONTROL_PLANE_URL); its path, if any, is not used. */
  upstream: string
  /** Keep-alive connections to the control plane at most (CONTROL_PLANE_CONNECTIONS). */
  connections: number
  /** The deployment's edge proof ({@link edgeProof} of SESSION_SECRET). */
  proof: string
}

/** The request's headers as the control plane gets them: the client's end-to-end ones and the gateway's statements. */
function forwardHeaders (req: FastifyRequest, proof: string): Record<string, string | string[]> {
  const incoming: IncomingHttpHeaders = req.headers
  // Headers the client's Connection header names are this hop's too.
  const named = typeof incoming.connection === 'string' ? incoming.connection.toLowerCase().split(',').map((s) => s.trim()) : []
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_HEADERS.has(name) || named.includes(name)) continue
    out[name] = value
  }
  out['x-forwarded-for'] = req.ip
  out['x-forwarded-proto'] = req.protocol
  out['x-forwarded-host'] = req.headers.host ?? ''
  out['x-request-id'] = req.id
  out[EDGE_PROOF_HEADER] = proof
  return out
}

/**
 * Serves every path the gateway does not serve itself (/api, the console and its assets) from
 * the control plane, so one address serves everything.
 *
 * Framing cannot be desynchronised: Node's parser has read the client's request whole (or
 * refused it); the body is buffered, and the request to the control plane is written by undici
 * from the method, the end-to-end headers and those bytes, with a Content-Length it computes
 * itself. No framing header of the client's (Content-Length, Transfer-Encoding, Connection,
 * Expect, ...) is ever copied, so what the control plane reads on the pooled connection is exactly
 * one request, whatever the client sent. (The gateway's edge hooks refuse, with the connection
 * closed, the bodies of GET and HEAD, which nothing here would forward.)
 *
 * The client's address (the socket's, or what a load balancer listed in GATEWAY_TRUST_PROXY
 * reported) goes along as the only X-Forwarded-For entry, with the deployment's edge proof: the
 * control plane believes these headers only next to it. Nothing is logged per request; an
 * unreachable control plane (starting, restarting) is a 503 with Retry-After and a warning at
 * most every 30 s, without a stack trace.
 */
export default async function controlPlaneProxy (app: FastifyInstance, opts: ControlPlaneProxyOptions) {
  const origin = new URL(opts.upstream).origin
  const pool = new Pool(origin, {
    connections: opts.connections,
    pipelining: 1,
    headersTimeout: CONTROL_PLANE_TIMEOUT_MS,
    bodyTimeout: CONTROL_PLANE_TIMEOUT_MS
  })
  app.addHook('onClose', async () => { await pool.destroy() })
  let lastWarning = 0

  // Bodies are forwarded as the bytes that came, whatever their type: no parsing, no re-encoding.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CONSOLE_BODY_LIMIT }, (_req, body, done) => { done(null, body) })

  const forward = async (req: FastifyRequest, reply: FastifyReply) => {
    const body = Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : null
    const gone = new AbortController()
    const onClose = () => { if (!reply.raw.writableFinished) gone.abort() }
    reply.raw.once('close', onClose)
    try {
      const res = await pool.request({
        path: req.url,
        method: req.method as HTTPMethods & ('GET' | 'POST'),
        headers: forwardHeaders(req, opts.proof),
        body,
        signal: gone.signal
      })
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined && !HOP_RESPONSE_HEADERS.has(name)) void reply.header(name, value)
      }
      return await reply.code(res.statusCode).send(res.body)
    } catch (err) {
      if (gone.signal.aborted) return await reply.code(499).send()
      const code = (err as { code?: string }).code ?? 'unknown'
      const now = Date.now()
      if (now - lastWarning >= WARN_EVERY_MS) {
        lastWarning = now
        req.log.warn({ code, controlPlane: origin }, 'control plane unreachable')
      }
      const timedOut = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
      return await reply.code(timedOut ? 504 : 503).header('retry-after', '5')
        .send({ success: false, message: timedOut ? 'The console did not answer in time, please try again' : 'The console is starting or unavailable, please try again shortly' })
    } finally {
      reply.raw.off('close', onClose)
    }
  }
  app.route({ method: METHODS, url: '/', handler: forward })
  app.route({ method: METHODS, url: '/*', handler: forward })
}
