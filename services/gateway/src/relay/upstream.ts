import { EventEmitter } from 'node:events'
import type { Readable } from 'node:stream'
import { Agent, request } from 'undici'
import type { UpstreamRequest } from '@modelgate/providers'

/** An upstream answer whose body has not been read yet. */
export interface UpstreamResponse {
  status: number
  contentType: string
  body: Readable
}

/**
 * The gateway's own connection pools to upstreams (one pool per origin, kept alive between
 * requests), rather than whichever global dispatcher another copy of undici installed.
 */
const upstreamAgent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000, connect: { noDelay: true } })

/**
 * Emits 'abort' once, when the client has gone; undici takes it as a request's signal. A plain
 * emitter: Node 20 builds an AbortController on EventTarget, about 10 us a request.
 */
export class ClientGone extends EventEmitter {
  aborted = false

  abort (): void {
    if (this.aborted) return
    this.aborted = true
    this.emit('abort')
  }
}

/** Sends `up`; resolves once the status and headers arrive (the body streams after). */
export async function send (up: UpstreamRequest, signal: ClientGone, timeoutMs: number): Promise<UpstreamResponse> {
  const res = await request(up.url, {
    dispatcher: upstreamAgent,
    method: up.method,
    headers: up.headers,
    body: up.body,
    signal,
    headersTimeout: timeoutMs,
    // Between two chunks of a stream; a long answer may take far longer in total.
    bodyTimeout: timeoutMs
  })
  const ct = res.headers['content-type']
  return { status: res.statusCode, contentType: Array.isArray(ct) ? ct[0] ?? '' : ct ?? '', body: res.body }
}

/** Reads at most `limit` bytes of a body as text and discards the rest. */
export async function readText (body: Readable, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const b = chunk as Buffer
    if (size < limit) chunks.push(b.subarray(0, limit - size))
    size += b.length
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Reads a whole body, refusing one larger than `limit` bytes. */
export async function readAll (body: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const b = chunk as Buffer
    size += b.length
    if (size > limit) {
      body.destroy()
      throw new Error(`upstream answer larger than ${limit} bytes`)
    }
    chunks.push(b)
  }
  return Buffer.concat(chunks)
}

/** The value of a text field of a multipart/form-data body (the model of an upload). */
export function multipartField (contentType: string, data: Buffer, name: string): string | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType)
  const b = boundary?.[1] ?? boundary?.[2]
  if (b === undefined) return undefined
  const text = data.toString('latin1')
  for (const part of text.split(`--${b}`)) {
    const headerEnd = part.indexOf('\r\n\r\n')
    if (headerEnd < 0) continue
    const headers = part.slice(0, headerEnd)
    if (!new RegExp(`name="${name}"`, 'i').test(headers) || /filename=/i.test(headers)) continue
    return Buffer.from(part.slice(headerEnd + 4).replace(/\r\n$/, ''), 'latin1').toString('utf8').trim()
  }
  return undefined
}
