import { fetch, type Response } from 'undici'
import type { ChannelConfig, FailureAction, ProviderAdaptor, UpstreamRequest } from '../core/adaptor.js'
import { defaultOutbound, outboundRefusal, type Outbound } from './outbound.js'
import { CredentialError } from './credentials.js'
import { classifyAnswer, cleanUpstreamMessage, failureSummary, unexpectedAnswer } from '../core/failure-text.js'
import { authorized, upstreamRequest, withOverrides } from '../core/overrides.js'

/** Outcome of a channel test (`GET /api/channel/test/{id}`). */
interface ChannelTestResult {
  ok: boolean
  /** Milliseconds until the whole answer arrived. */
  ms: number
  /**
   * Why it failed, for admins; empty on success. An upstream's answer is summed up as
   * failureSummary does (status, code, its message cleaned); one that is not JSON by its type
   * and size only, so a channel pointed at an internal page cannot be used to read it.
   */
  message: string
  /** How the adaptor classifies a failed answer ('disable': bad key or exhausted account); absent when no answer came. */
  action?: FailureAction
}

/** Largest test answer read: a 16-token completion is a few kilobytes. */
const TEST_ANSWER_MAX_BYTES = 1024 * 1024
/** Largest model list read: the biggest real catalogues are a few hundred kilobytes. */
const MODEL_LIST_MAX_BYTES = 4 * 1024 * 1024

/** The upstream's answer went past the byte cap; it was not read further. */
class AnswerTooLarge extends Error {
  constructor (maxBytes: number) {
    super(`the upstream answer exceeds ${maxBytes / (1024 * 1024)} MiB`)
    this.name = 'AnswerTooLarge'
  }
}

/**
 * Reads the body as a stream and aborts the request as soon as it passes `maxBytes`, so a
 * misconfigured or hostile upstream cannot make us buffer an unbounded answer.
 */
async function readCapped (res: Response, maxBytes: number, abort: AbortController): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? '')
  if (Number.isFinite(declared) && declared > maxBytes) {
    abort.abort()
    throw new AnswerTooLarge(maxBytes)
  }
  if (res.body === null) return Buffer.alloc(0)
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      abort.abort()
      await reader.cancel().catch(() => {})
      throw new AnswerTooLarge(maxBytes)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

/** How a channel is reached: its proxy, through its service's outbound guard (absent: the default guard). */
interface Route {
  proxyUrl?: string | undefined
  outbound?: Outbound | undefined
}

/**
 * Sends `up` through the channel's proxy (or directly) and its guard, with a timeout covering the
 * whole answer, redirects not followed, reading at most `maxBytes` of the body. Internal to this package.
 */
export async function call (up: UpstreamRequest, route: Route, timeoutMs: number, maxBytes: number): Promise<{ status: number, contentType: string, body: Buffer }> {
  const abort = new AbortController()
  // The timeout covers reading the body too, not only the headers. A timer of our own, held
  // until the call ends: on Node 20 a composite of AbortSignal.timeout() may lose its source to
  // garbage collection and never fire, leaving the call waiting forever.
  const timer = setTimeout(() => { abort.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')) }, timeoutMs)
  try {
    const res = await fetch(up.url, {
      dispatcher: (route.outbound ?? defaultOutbound).dispatcher(route.proxyUrl),
      method: up.method,
      headers: up.headers,
      body: up.body === undefined ? undefined : typeof up.body === 'string' ? up.body : new Uint8Array(up.body),
      signal: abort.signal,
      redirect: 'manual'
    })
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await readCapped(res, maxBytes, abort) }
  } finally {
    clearTimeout(timer)
  }
}

/** A failure of `call` as a message safe to show an admin (never the key). */
export function failureMessage (err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: unknown, message?: unknown } }
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`
  // The guard's refusal names the host and why, never anything the target sent.
  const refusal = outboundRefusal(err)
  if (refusal !== undefined) return refusal.message
  // fetch reports connection errors as a TypeError ("fetch failed") with the system error as the cause.
  if (e.name !== 'TypeError') return e.message
  const detail = [e.cause?.code, e.cause?.message].find((d) => typeof d === 'string' && d !== '')
  return `request failed: ${e.message}${detail === undefined ? '' : ` (${String(detail)})`}`
}

/**
 * Sends the adaptor's test request for `model` and times it. Used by the control plane's channel
 * test and by the billing worker's periodic tests. Answers past 1 MiB
 * fail the test.
 */
export async function testChannel (adaptor: ProviderAdaptor, channel: ChannelConfig, model: string, timeoutMs = 30_000): Promise<ChannelTestResult> {
  const started = Date.now()
  try {
    const req = adaptor.testRequest(channel, model)
    const res = await call(await upstreamRequest(adaptor, channel, req), channel, timeoutMs, TEST_ANSWER_MAX_BYTES)
    const ms = Date.now() - started
    if (res.status < 200 || res.status >= 300) {
      const failure = classifyAnswer(adaptor, res.status, res.contentType, res.body.toString('utf8'))
      return { ok: false, ms, message: failureSummary(res.status, failure), action: failure.action }
    }
    const failure = unexpectedAnswer(req.endpoint, res.contentType, res.body) ?? adaptor.convertResponse(channel, req, res.status, res.contentType, res.body).failure
    if (failure !== undefined) return { ok: false, ms, message: failureSummary(res.status, failure), action: failure.action }
    return { ok: true, ms, message: '' }
  } catch (err) {
    if (err instanceof CredentialError) return { ok: false, ms: Date.now() - started, message: cleanUpstreamMessage(err.message), action: err.action }
    return { ok: false, ms: Date.now() - started, message: failureMessage(err, timeoutMs) }
  }
}

/**
 * The upstream's model list (`GET /api/channel/fetch_models`); undefined when the type has none.
 * Throws with a message safe to show an admin when the upstream fails, is too slow, or answers
 * more than 4 MiB.
 */
export async function fetchModels (adaptor: ProviderAdaptor, channel: ChannelConfig, timeoutMs = 30_000): Promise<string[] | undefined> {
  const listing = adaptor.listModelsRequest(channel)
  if (listing === undefined) return undefined
  // Header overrides may carry the upstream's authentication; body parameters do not apply to a GET.
  const up = await authorized(adaptor, channel, withOverrides({ ...channel, paramOverride: undefined }, listing))
  let res: { status: number, contentType: string, body: Buffer }
  try {
    res = await call(up, channel, timeoutMs, MODEL_LIST_MAX_BYTES)
  } catch (err) {
    throw new Error(failureMessage(err, timeoutMs), { cause: err })
  }
  if (res.status < 200 || res.status >= 300) throw new Error(failureSummary(res.status, classifyAnswer(adaptor, res.status, res.contentType, res.body.toString('utf8'))))
  return adaptor.parseModels(res.body.toString('utf8'))
}
