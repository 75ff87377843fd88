import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import { MAX_URL_BYTES, type TrustProxyOption } from '@modelgate/service'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/** Headers a request may have at most; more is answered 431. */
export const MAX_HEADERS = 100

/** Methods whose body nothing in the gateway reads or forwards. */
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE'])

export interface EdgeOptions {
  /** Open connections one client address may hold (0 = no cap); trusted proxies are not capped. */
  maxConnectionsPerIp: number
  /** GATEWAY_TRUST_PROXY, as Fastify got it: the load balancers whose connections carry many clients. */
  trustProxy: TrustProxyOption
}

/** The refusal's body: the console's envelope on its paths, OpenAI's everywhere else (as the client error handler). */
function refusalBody (url: string, message: string, code: string): unknown {
  return url.startsWith('/api/')
    ? { success: false, message }
    : { error: { message, type: 'invalid_request_error', param: null, code } }
}

/** Answers `status` and closes the client's connection once the answer is written. */
function refuse (req: FastifyRequest, reply: FastifyReply, status: number, message: string, code: string): void {
  // Node closes a connection after a `Connection: close` answer, but not a websocket upgrade's
  // socket, which it has handed over: that one is ended here.
  reply.raw.once('finish', () => { req.raw.socket.end() })
  void reply.code(status).header('connection', 'close').send(refusalBody(req.url, message, code))
}

/**
 * The HTTP edge's own rules, before any route (relay, realtime upgrade, console proxy) runs:
 *
 * - A GET, HEAD or TRACE that announces a body (any Transfer-Encoding, a Content-Length other than
 *   0) is refused with 400 and the connection closed: no route reads such a body, so no hop may
 *   forward the request as if it had none, and a websocket upgrade must not start with bytes
 *   that were announced as a body.
 * - More than {@link MAX_HEADERS} headers: 431; a request target over {@link MAX_URL_BYTES}: 414
 *   (larger than Node's header limit, it is told apart by the client error handler).
 * - A client address holds at most `maxConnectionsPerIp` connections at once; the next one gets a
 *   429 with Retry-After and is closed before anything it sends is read. Connections from the
 *   trusted load balancers are not counted (they carry many clients).
 */
async function edge (app: FastifyInstance, opts: EdgeOptions) {
  // Callback style: no promise per request on the relay's hot path.
  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw
    if (raw.rawHeaders.length > MAX_HEADERS * 2) {
      refuse(req, reply, 431, `The request has more than ${MAX_HEADERS} headers`, 'too_many_headers')
      return
    }
    if (raw.url !== undefined && raw.url.length > MAX_URL_BYTES) {
      refuse(req, reply, 414, `The request URL is longer than ${MAX_URL_BYTES} bytes`, 'uri_too_long')
      return
    }
    if (BODYLESS.has(raw.method ?? '')) {
      const length = raw.headers['content-length']
      if (raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) {
        refuse(req, reply, 400, `A ${raw.method} request cannot carry a body`, 'body_not_allowed')
        return
      }
    }
    done()
  })

  if (opts.maxConnectionsPerIp > 0) capConnections(app, opts)
}

/** Counts open connections per client address and refuses those over the cap (see {@link edge}). */
function capConnections (app: FastifyInstance, opts: EdgeOptions): void {
  const { trustProxy } = opts
  const trusted = trustProxy === false
    ? () => false
    : typeof trustProxy === 'function' ? (address: string) => trustProxy(address, 0) : proxyAddr.compile(trustProxy.split(',').map((s) => s.trim()))
  const open = new Map<string, number>()
  const body = JSON.stringify({ error: { message: 'Too many open connections from this address', type: 'rate_limit_exceeded', param: null, code: 'too_many_connections' } })
  const answer = `HTTP/1.1 429 ${STATUS_CODES[429]}\r\nRetry-After: 1\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  app.server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    if (trusted(address, 0)) return
    const count = (open.get(address) ?? 0) + 1
    if (count > opts.maxConnectionsPerIp) {
      // Nothing the client sends on it is read: the refusal, then the connection is gone.
      socket.pause()
      socket.write(answer, () => socket.destroy())
      return
    }
    open.set(address, count)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

export default fp(edge, { name: 'gateway-edge', fastify: '5.x' })
