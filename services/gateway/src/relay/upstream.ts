import { EventEmitter } from 'node:events'
import type { Dispatcher } from 'undici'
import { defaultOutbound, type UpstreamRequest } from '@modelgate/providers'

/**
 * Emits 'abort' once, when the client has gone. A plain emitter: Node 20 builds an
 * AbortController on EventTarget, about 10 us a request.
 */
export class ClientGone extends EventEmitter {
  aborted = false

  abort (): void {
    if (this.aborted) return
    this.aborted = true
    this.emit('abort')
  }
}

/**
 * How long one upstream call may keep the gateway waiting. `idleMs` (UPSTREAM_TIMEOUT_MS) bounds
 * the wait for the answer's headers, then for its body's first chunk, then between two chunks:
 * there is no bound on the whole, so a long stream that keeps coming is never cut.
 * `firstByteMs` (UPSTREAM_FIRST_BYTE_TIMEOUT_MS, streamed calls only) also bounds the time from
 * sending the request to the body's first byte, so a stream that never begins (a silent
 * connection, headers and then nothing) fails over without waiting `idleMs`. A non-streamed
 * answer's first byte often comes only once the whole answer is made, so it has no such bound.
 */
export interface CallTimeouts {
  idleMs: number
  firstByteMs?: number
}

/** The first byte of the answer's body did not come within the first-byte timeout. */
export class FirstByteTimeout extends Error {
  readonly code = 'UPSTREAM_FIRST_BYTE_TIMEOUT'

  constructor (ms: number) {
    super(`the upstream sent no answer within ${ms} ms`)
  }
}

/** Codes of the errors of a call that ran out of time (undici's, the first-byte timeout's, the system's). */
const TIMEOUT_CODES = new Set(['UPSTREAM_FIRST_BYTE_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'])

/** Whether an upstream call failed by running out of time (a timeout, not a refusal or a reset), looking through causes. */
export function isTimeout (err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return true
  }
  return false
}

/** Origin and path of an upstream URL, parsed once per distinct URL (a channel's few endpoints). */
const targets = new Map<string, { origin: string, path: string }>()
function targetOf (url: string): { origin: string, path: string } {
  let t = targets.get(url)
  if (t === undefined) {
    const u = new URL(url)
    t = { origin: u.origin, path: `${u.pathname}${u.search}` }
    if (targets.size >= 10_000) targets.clear()
    targets.set(url, t)
  }
  return t
}

/** The value of a header in undici's raw list (name, value, name, value, ...), or ''. */
function rawHeader (raw: Buffer[], name: string): string {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!
    if (key.length === name.length && key.toString('latin1').toLowerCase() === name) return raw[i + 1]!.toString('latin1')
  }
  return ''
}

/**
 * One upstream call, as an undici dispatch handler: the answer's status and content type once
 * its headers arrive, then its body handed chunk by chunk to one reader. No Readable stream, no
 * async iterator and no promise per chunk (the request() API's body stream cost about 20 us a
 * request, measured). Chunks that arrive before the reader is attached wait in order.
 */
export class UpstreamResponse implements Dispatcher.DispatchHandler {
  status = 0
  contentType = ''
  readonly #headers: { resolve: (r: UpstreamResponse) => void, reject: (err: Error) => void }
  #abortCall: ((err: Error) => void) | undefined
  #resumeCall: (() => void) | undefined
  /** Chunks not yet handed over: the reader is not attached yet, or it stopped the flow. */
  #waiting: Buffer[] = []
  #reader: ((chunk: Buffer) => boolean) | undefined
  /** The reader stopped the flow: chunks wait until resume(). */
  #held = false
  #end: { resolve: () => void, reject: (err: Error) => void } | undefined
  #outcome: 'open' | 'complete' | Error = 'open'
  #started = false
  #abortedWith: Error | undefined
  /** Cuts the call when the body's first byte is late (streamed calls); cleared by that byte or the end. */
  #firstByteTimer: NodeJS.Timeout | undefined
  readonly #clientGone: ClientGone
  readonly #onGone = () => { this.abort(new Error('the client has gone')) }

  constructor (headers: { resolve: (r: UpstreamResponse) => void, reject: (err: Error) => void }, clientGone: ClientGone) {
    this.#headers = headers
    this.#clientGone = clientGone
    // Until the call ends (headers and body), a client that leaves cancels it.
    if (clientGone.aborted) this.#abortedWith = new Error('the client has gone')
    else clientGone.once('abort', this.#onGone)
  }

  onConnect (abort: (err?: Error) => void): void {
    this.#abortCall = abort
    if (this.#abortedWith !== undefined) abort(this.#abortedWith)
  }

  onHeaders (statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx informational answers come before the real one.
    if (statusCode < 200) return true
    this.status = statusCode
    this.contentType = rawHeader(rawHeaders, 'content-type')
    this.#resumeCall = resume
    this.#started = true
    this.#headers.resolve(this)
    return true
  }

  onData (chunk: Buffer): boolean {
    if (this.#firstByteTimer !== undefined) this.#clearFirstByteTimer()
    if (this.#reader === undefined || this.#held) {
      // No reader yet, or one that stopped the flow: the chunk waits (and the flow stops).
      this.#waiting.push(chunk)
      return this.#reader === undefined
    }
    if (this.#reader(chunk)) return true
    this.#held = true
    return false
  }

  onComplete (): void {
    this.#finish('complete')
  }

  onError (err: Error): void {
    if (!this.#started) this.#headers.reject(err)
    this.#finish(err)
  }

  #finish (outcome: 'complete' | Error): void {
    if (this.#outcome !== 'open') return
    this.#clearFirstByteTimer()
    this.#outcome = outcome
    this.#clientGone.off('abort', this.#onGone)
    this.#settleEnd()
  }

  /**
   * Ends the reader's wait once the call has ended: a failure at once, a complete body when no
   * chunk is left waiting for a stopped reader.
   */
  #settleEnd (): void {
    if (this.#end === undefined || this.#outcome === 'open') return
    if (this.#outcome !== 'complete') this.#end.reject(this.#outcome)
    else if (this.#waiting.length === 0) this.#end.resolve()
  }

  /** Hands the waiting chunks to the reader; false when it stopped the flow before the last. */
  #drain (): boolean {
    this.#held = false
    while (this.#waiting.length > 0) {
      if (!this.#reader!(this.#waiting.shift()!)) {
        this.#held = true
        return false
      }
    }
    return true
  }

  /**
   * Hands every chunk of the body to `take`, in order, and resolves when the body has ended
   * (rejects when the call failed or was aborted). `take` returns false to stop the flow until
   * resume() is called.
   */
  async read (take: (chunk: Buffer) => boolean): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#end = { resolve, reject }
      this.#reader = take
      // Chunks that came before the reader, in order, as far as the reader takes them.
      this.#drain()
      this.#settleEnd()
    })
  }

  /** Lets the body flow again after the reader returned false. */
  resume (): void {
    if (this.#reader === undefined || !this.#drain()) return
    if (this.#outcome === 'open') this.#resumeCall?.()
    else this.#settleEnd()
  }

  /** Stops the call (its reader then rejects with `err`). */
  abort (err: Error): void {
    if (this.#outcome !== 'open') return
    this.#abortedWith = err
    this.#abortCall?.(err)
  }

  /** How the call failed (aborted, timed out, broken off); undefined while open or once complete. */
  get error (): Error | undefined {
    return this.#outcome instanceof Error ? this.#outcome : undefined
  }

  /**
   * Cuts the call unless the body's first byte comes within `ms` of now. The wait for headers
   * fails at once (undici may not have handed over the call yet: still connecting); a reader
   * already attached rejects with the timeout.
   */
  limitFirstByte (ms: number): void {
    this.#firstByteTimer = setTimeout(() => {
      this.#firstByteTimer = undefined
      const err = new FirstByteTimeout(ms)
      if (!this.#started) this.#headers.reject(err)
      this.abort(err)
    }, ms)
  }

  #clearFirstByteTimer (): void {
    clearTimeout(this.#firstByteTimer)
    this.#firstByteTimer = undefined
  }
}

/**
 * Sends `up` through `dispatcher` (the outbound guard's pools: direct, or the channel's proxy);
 * resolves once the status and headers arrive (read the body from the answer). A client that
 * leaves before the call has ended cancels it; a call that runs out of time (see
 * {@link CallTimeouts}) fails with an error {@link isTimeout} recognises.
 */
export async function send (up: UpstreamRequest, clientGone: ClientGone, timeouts: CallTimeouts, dispatcher: Dispatcher = defaultOutbound.dispatcher('')): Promise<UpstreamResponse> {
  const target = targetOf(up.url)
  return await new Promise<UpstreamResponse>((resolve, reject) => {
    const res = new UpstreamResponse({ resolve, reject }, clientGone)
    if (timeouts.firstByteMs !== undefined) res.limitFirstByte(timeouts.firstByteMs)
    // The connection pools of the origin: shared direct ones, or the proxy's (made on first use).
    dispatcher.dispatch({
      origin: target.origin,
      path: target.path,
      method: up.method as Dispatcher.HttpMethod,
      headers: up.headers,
      body: up.body ?? null,
      headersTimeout: timeouts.idleMs,
      // From the headers to the first chunk, then between two chunks; a long answer may take far longer in total.
      bodyTimeout: timeouts.idleMs
    }, res)
  })
}

/** Reads at most `limit` bytes of a body as text and discards the rest. */
export async function readText (res: UpstreamResponse, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  await res.read((b) => {
    if (size < limit) chunks.push(b.subarray(0, limit - size))
    size += b.length
    return true
  })
  return Buffer.concat(chunks).toString('utf8')
}

/** Reads a whole body, refusing one larger than `limit` bytes (the rest is not read). */
export async function readAll (res: UpstreamResponse, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  await res.read((b) => {
    size += b.length
    if (size > limit) res.abort(new Error(`upstream answer larger than ${limit} bytes`))
    else chunks.push(b)
    return true
  })
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
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
