// Amazon Bedrock on the wire, for the AWS Claude fixture and tests: SigV4 checked by hand (AWS's
// published algorithm, node:crypto only) and the event stream encoded with @smithy/eventstream-codec.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import type { Seen } from '../kit.js'

export interface AwsSecret {
  accessKeyId: string
  secretAccessKey: string
  region: string
  sessionToken?: string
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest()

/** RFC 3986 escaping as SigV4 wants it: everything but unreserved characters. */
const escape = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** Why a request's signature is refused, or undefined when AWS would accept it. */
export function sigV4Problem (seen: Seen, secret: AwsSecret, service = 'bedrock', now = Date.now()): string | undefined {
  const auth = seen.headers.authorization
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(auth ?? '')
  if (match === null) return 'no SigV4 Authorization header'
  const [, accessKeyId, day, region, scopeService, signedHeaders, signature] = match as unknown as [string, string, string, string, string, string, string]
  if (accessKeyId !== secret.accessKeyId) return 'unknown access key'
  if (region !== secret.region || scopeService !== service) return `credential scope ${region}/${scopeService}`
  const amzDate = seen.headers['x-amz-date']
  if (typeof amzDate !== 'string' || !/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== day) return 'x-amz-date missing or not the scope\'s day'
  const at = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15))
  if (Math.abs(now - at) > 5 * 60_000) return 'signature expired'
  const payloadHash = sha256(seen.body)
  if (seen.headers['x-amz-content-sha256'] !== payloadHash) return 'x-amz-content-sha256 is not the body\'s hash'
  const names = signedHeaders.split(';')
  if (!names.includes('host') || !names.includes('x-amz-date')) return 'host and x-amz-date must be signed'
  for (const name of Object.keys(seen.headers)) if (name.startsWith('x-amz-') && !names.includes(name)) return `${name} is not signed`
  if (secret.sessionToken !== undefined && seen.headers['x-amz-security-token'] !== secret.sessionToken) return 'missing session token'
  const [path = '', rawQuery = ''] = seen.url.split('?', 2)
  // Every path segment escaped again (the wire path is escaped once): SigV4 for every service but S3.
  const uri = path.split('/').map((segment) => escape(segment)).join('/')
  const query = rawQuery === ''
    ? ''
    : rawQuery.split('&').map((pair) => {
      const [k = '', v = ''] = pair.split('=', 2)
      return [escape(decodeURIComponent(k)), escape(decodeURIComponent(v))] as const
    }).sort(([a, x], [b, y]) => a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0).map(([k, v]) => `${k}=${v}`).join('&')
  const headers = names.map((name) => {
    const value = seen.headers[name]
    const text = Array.isArray(value) ? value.join(',') : value ?? ''
    return `${name}:${text.trim().replace(/\s+/g, ' ')}\n`
  }).join('')
  const canonical = [seen.method, uri, query, headers, signedHeaders, payloadHash].join('\n')
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, `${day}/${region}/${service}/aws4_request`, sha256(canonical)].join('\n')
  const key = hmac(hmac(hmac(hmac(`AWS4${secret.secretAccessKey}`, day), region), service), 'aws4_request')
  const expected = createHmac('sha256', key).update(stringToSign).digest()
  return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? undefined : 'signature mismatch'
}

/** Bedrock's answer to a request whose signature does not match. */
export function refuseSignature (res: ServerResponse): void {
  res.writeHead(403, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' })
    .end(JSON.stringify({ message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.' }))
}

/** A Bedrock error answer (`{"message"}`, its type in x-amzn-ErrorType). */
export function bedrockError (res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': type }).end(JSON.stringify({ message }))
}

const codec = new EventStreamCodec(toUtf8, fromUtf8)
const text = (value: string) => ({ type: 'string' as const, value })

const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.repeat(5)
/** Lengths of the padding of successive chunks (Bedrock's vary at random). */
const PADDING_LENGTHS = [250, 7, 31, 45, 19, 3, 11, 26]

/** One `chunk` event carrying an Anthropic stream event, with Bedrock's padding `p` (which hides the event's length). */
export function chunkMessage (event: unknown, padding = 5): Buffer {
  const bytes = Buffer.from(JSON.stringify(event)).toString('base64')
  const headers: MessageHeaders = { ':event-type': text('chunk'), ':content-type': text('application/json'), ':message-type': text('event') }
  return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify({ bytes, p: PADDING.slice(0, padding) })) }))
}

/** A stream exception message (`:message-type: exception`). */
export function exceptionMessage (type: string, message: string): Buffer {
  const headers: MessageHeaders = { ':exception-type': text(type), ':content-type': text('application/json'), ':message-type': text('exception') }
  return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify({ message })) }))
}

/** Bedrock's invocation metrics, as it adds them to the last event. */
export const INVOCATION_METRICS = { inputTokenCount: 8, outputTokenCount: 7, invocationLatency: 812, firstByteLatency: 301, cacheReadInputTokenCount: 4, cacheWriteInputTokenCount: 0 }

/** The events of an Anthropic SSE text. */
export function sseEvents (sse: string): Array<Record<string, unknown>> {
  return sse.split('\n\n').filter((block) => block !== '').map((block) => {
    const data = block.split('\n').find((line) => line.startsWith('data: '))
    return JSON.parse(data?.slice('data: '.length) ?? '{}') as Record<string, unknown>
  })
}

/**
 * An Anthropic stream as Bedrock sends it: one chunk message per event, the invocation metrics
 * on `message_stop` (as Bedrock adds them; null: none), pings dropped (Bedrock sends none).
 */
export function bedrockStream (events: Array<Record<string, unknown>>, metrics: Record<string, number> | null = INVOCATION_METRICS): Buffer {
  return Buffer.concat(events.filter((event) => event.type !== 'ping').map((event, i) => chunkMessage(
    event.type === 'message_stop' && metrics !== null ? { ...event, 'amazon-bedrock-invocationMetrics': metrics } : event,
    PADDING_LENGTHS[i % PADDING_LENGTHS.length]
  )))
}
