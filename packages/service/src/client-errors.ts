import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'

/** The refusal Node's HTTP parser makes before any route runs, by the error it reports. */
function refusalOf (code: string | undefined, packet: Buffer | undefined): { status: number, message: string, code: string, label: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      if (packet !== undefined && inRequestLine(packet)) return { status: 414, message: 'The request URL is too long', code: 'uri_too_long', label: 'uri_too_long' }
      return { status: 431, message: 'The request headers are too large', code: 'request_header_fields_too_large', label: 'header_overflow' }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'The request was not received in time', code: 'request_timeout', label: 'timeout' }
    default:
      return { status: 400, message: 'The request could not be parsed as HTTP', code: 'bad_request', label: 'error' }
  }
}

/** Longest request target (path and query) the gateway serves; longer is answered 414. */
export const MAX_URL_BYTES = 8192

/**
 * Whether it is the request line that overflowed Node's header limit: the bytes begin with a
 * method and a target, and the line does not end within {@link MAX_URL_BYTES}. The URL was too
 * long, not the headers. (Only the chunk being parsed is seen: a request line that began in an
 * earlier TCP read is reported as 431.)
 */
function inRequestLine (packet: Buffer): boolean {
  if (!/^[A-Z]{3,10} \S/.test(packet.subarray(0, 16).toString('latin1'))) return false
  const lineEnd = packet.indexOf(10)
  return lineEnd < 0 || lineEnd > MAX_URL_BYTES
}

/**
 * Fastify's clientErrorHandler for the gateway: what Node refuses before any route runs (headers
 * over the size limit (414 when it is the URL that is too long), a request not received within requestTimeout, malformed HTTP) gets
 * OpenAI's error envelope, with Fastify's status (431, 408, 400), and the socket is closed, as
 * Fastify's own handler does. Nothing is written once a response has begun on the socket.
 */
export function openAIClientErrorHandler (this: { log?: FastifyBaseLogger } | undefined, err: Error & { code?: string }, socket: Socket): void {
  // A reset connection is already gone; nothing to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const refusal = refusalOf(err.code, (err as { rawPacket?: Buffer }).rawPacket)
  this?.log?.trace({ err }, `client ${refusal.label}`)
  const started = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true
  if (socket.writable && !started) {
    const body = JSON.stringify({ error: { message: refusal.message, type: 'invalid_request_error', param: null, code: refusal.code } })
    socket.write(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(err)
}
