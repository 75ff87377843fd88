import type { ChannelConfig, ProviderAdaptor, UpstreamRequest } from './adaptor.js'

/** Outcome of a channel test (`GET /api/channel/test/{id}`). */
export interface ChannelTestResult {
  ok: boolean
  /** Milliseconds until the whole answer arrived. */
  ms: number
  /** Why it failed, safe to show; empty on success. */
  message: string
}

async function call (up: UpstreamRequest, timeoutMs: number): Promise<{ status: number, contentType: string, body: Buffer }> {
  const res = await fetch(up.url, {
    method: up.method,
    headers: up.headers,
    body: up.body === undefined ? undefined : typeof up.body === 'string' ? up.body : new Uint8Array(up.body),
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'manual'
  })
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()) }
}

/**
 * Sends the adaptor's test request for `model` and times it. Used by the control plane's channel
 * test and by the billing worker's periodic tests.
 */
export async function testChannel (adaptor: ProviderAdaptor, channel: ChannelConfig, model: string, timeoutMs = 30_000): Promise<ChannelTestResult> {
  const started = Date.now()
  const req = adaptor.testRequest(channel, model)
  try {
    const res = await call(adaptor.buildRequest(channel, req), timeoutMs)
    const ms = Date.now() - started
    if (res.status < 200 || res.status >= 300) return { ok: false, ms, message: adaptor.classifyFailure(res.status, res.body.toString('utf8')).message }
    adaptor.convertResponse(channel, req, res.status, res.contentType, res.body)
    return { ok: true, ms, message: '' }
  } catch (err) {
    const e = err as Error
    return { ok: false, ms: Date.now() - started, message: e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `request failed: ${e.message}` }
  }
}

/** The upstream's model list (`GET /api/channel/fetch_models`); undefined when the type has none. */
export async function fetchModels (adaptor: ProviderAdaptor, channel: ChannelConfig, timeoutMs = 30_000): Promise<string[] | undefined> {
  const up = adaptor.listModelsRequest(channel)
  if (up === undefined) return undefined
  const res = await call(up, timeoutMs)
  if (res.status < 200 || res.status >= 300) throw new Error(adaptor.classifyFailure(res.status, res.body.toString('utf8')).message)
  return adaptor.parseModels(res.body.toString('utf8'))
}
