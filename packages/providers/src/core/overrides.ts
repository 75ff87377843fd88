import type { ChannelConfig, ProviderAdaptor, RelayRequest, UpstreamRequest } from './adaptor.js'

/**
 * The channel's header and parameter overrides applied to a request its adaptor built: headers
 * replace the adaptor's of the same name (any case) or are added; the parameter override's
 * top-level fields replace or join those of a JSON body (after model mapping, so an override of
 * `model` wins). Bodies that are not a JSON object (multipart uploads) keep their bytes.
 */
export function withOverrides (channel: ChannelConfig, up: UpstreamRequest): UpstreamRequest {
  const params = channel.paramOverride
  const headers = channel.headerOverride
  const hasParams = params !== undefined && Object.keys(params).length > 0
  const hasHeaders = headers !== undefined && Object.keys(headers).length > 0
  if (!hasParams && !hasHeaders) return up
  const out: UpstreamRequest = { ...up, headers: { ...up.headers } }
  if (hasHeaders) {
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase()
      for (const existing of Object.keys(out.headers)) if (existing.toLowerCase() === lower) delete out.headers[existing]
      out.headers[name] = value.replaceAll('{api_key}', channel.key)
    }
  }
  if (hasParams && typeof up.body === 'string' && /json/i.test(contentTypeOf(up.headers))) {
    let body: unknown
    try {
      body = JSON.parse(up.body)
    } catch {
      return out
    }
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) out.body = JSON.stringify({ ...body, ...params })
  }
  return out
}

function contentTypeOf (headers: Readonly<Record<string, string>>): string {
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === 'content-type') return value
  return ''
}

/** The adaptor's upstream request for `req` with the channel's overrides, authorized (relay calls and channel tests). */
export async function upstreamRequest (adaptor: ProviderAdaptor, channel: ChannelConfig, req: RelayRequest): Promise<UpstreamRequest> {
  return await authorized(adaptor, channel, withOverrides(channel, adaptor.buildRequest(channel, req)))
}

/** `up` after the adaptor's authorize step, when it has one. */
export async function authorized (adaptor: ProviderAdaptor, channel: ChannelConfig, up: UpstreamRequest): Promise<UpstreamRequest> {
  return adaptor.authorize === undefined ? up : await adaptor.authorize(channel, up)
}

/** Whether an answer of `contentType` to a streamed request is the adaptor's stream framing. */
export function isStreamAnswer (adaptor: ProviderAdaptor, contentType: string): boolean {
  return adaptor.isStream === undefined ? /event-stream/i.test(contentType) : adaptor.isStream(contentType)
}
