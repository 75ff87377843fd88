import type { ClassifiedFailure, Endpoint, ProviderAdaptor } from './adaptor.js'

/**
 * What an upstream says when it fails, made fit to be read by others: clients (only of failures
 * about their own request), admins (logs, channel tests) and the channel's status reason. A
 * channel may point at anything (a misconfigured base URL, an internal service), so its text is
 * never shown raw: only a message read from a recognised error shape, cleaned here, and for a
 * body that is not JSON only what it was (its type and size), never what it said.
 */

/** The most characters of an upstream's message anyone is shown: a sentence and its detail. */
export const UPSTREAM_MESSAGE_MAX_CHARS = 300

/** What a link, a host or an address becomes in a cleaned message. */
export const REDACTED = '[redacted]'

/** A link; it ends before trailing punctuation, so the sentence keeps its full stop. */
export const URL_PATTERN = /\b(?:https?|wss?):\/\/[^\s"'<>]*[^\s"'<>.,;:!?)]/gi

// Top-level domains that make a dotted word a host name: the common public ones and the
// names used inside networks. Not every two-letter word: "messages.to" or "config.js" stay.
const TLDS = 'com|net|org|io|ai|dev|app|cloud|co|info|biz|xyz|tech|site|online|top|cn|uk|de|jp|fr|ru|us|eu|br|au|ca|nl|kr|sg|hk|tw|ch|se|es|pl|vn|' +
  'internal|local|localhost|localdomain|lan|corp|home|intranet|private|test|example|invalid|svc|cluster|arpa'
const HOST_NAME = new RegExp(`\\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+(?:${TLDS})\\b(?::\\d{1,5}\\b)?|\\blocalhost\\b(?::\\d{1,5}\\b)?`, 'gi')
/**
 * host:port, the host a name with a letter in it, starting a word (a service name such as
 * redis:6379; "12:30" and the "01T10:30" of an ISO time are not hosts).
 */
const HOST_PORT = /(?<![\w.:-])(?!\d{4}-\d\d-\d\dT)(?=[a-z0-9.-]*[a-z])[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?:\d{1,5}\b/gi
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g
// Full (eight groups) or compressed (with ::), with at least one hex digit, optionally [bracketed] with a port.
const IPV6 = /(?<![\w:.])\[?(?=[0-9a-f:]*[0-9a-f])(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{0,4}::(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{0,4})\]?(?::\d{1,5})?(?![\w:])/gi

/**
 * An upstream's message as anyone may read it: links, host names (with their ports), IP
 * addresses and host:port pairs become {@link REDACTED}; bearer tokens and key-like strings
 * (sk-..., AIza..., AKIA..., 32+ letters and digits, or 32+ of them, `-` and `_` with a digit
 * among them: refresh tokens, request ids) become `***`; whitespace is collapsed and
 * the text cut to {@link UPSTREAM_MESSAGE_MAX_CHARS}. Cleaning a cleaned message changes nothing,
 * so each place that shows one may clean it again. The one cleaning function: classifiers, the
 * relay, logs and channel tests all use it.
 */
export function cleanUpstreamMessage (message: string): string {
  const cleaned = message
    .replace(URL_PATTERN, REDACTED)
    .replace(/\bBearer\s+\S+/gi, 'Bearer ***')
    .replace(/\b(sk|rk|pk|ak)-(?:[\w*-]|\.(?=[\w*])){4,}/gi, '$1-***')
    .replace(/\bAIza[\w-]{10,}/g, '***')
    .replace(/\b(?:AKIA|ASIA)[A-Z0-9]{12,}\b/g, '***')
    .replace(/\b[A-Za-z0-9]{32,}\b/g, '***')
    .replace(/(?<![\w-])(?=[\w-]*\d)[\w-]{32,}(?![\w-])/g, '***')
    .replace(IPV4, REDACTED)
    .replace(IPV6, REDACTED)
    .replace(HOST_NAME, REDACTED)
    .replace(HOST_PORT, REDACTED)
    .replace(/\s+/g, ' ')
    .replace(/\s+([.,;:])/g, '$1')
    .trim()
  if (cleaned.length <= UPSTREAM_MESSAGE_MAX_CHARS) return cleaned
  // Never half of a surrogate pair at the cut.
  const end = /[\uD800-\uDBFF]/.test(cleaned[UPSTREAM_MESSAGE_MAX_CHARS - 1] ?? '') ? UPSTREAM_MESSAGE_MAX_CHARS - 1 : UPSTREAM_MESSAGE_MAX_CHARS
  return cleaned.slice(0, end)
}

/** An answer that is not JSON, as admins are told of it: its media type and size, never its text. */
export function nonJsonAnswer (contentType: string, bytes: number): string {
  const type = /^\s*([\w.+-]+\/[\w.+-]+)/.exec(contentType)?.[1]?.toLowerCase() ?? 'no content type'
  return bytes === 0 ? `empty answer (${type})` : `non-JSON answer (${type}, ${bytes} bytes)`
}

/** Whether `body` begins as JSON does (an object or an array): a cheap look at its first byte, not a parse. */
export function looksLikeJson (body: string | Buffer): boolean {
  if (typeof body === 'string') return /^\s*[{[]/.test(body)
  for (const byte of body) {
    if (byte === 0x7b || byte === 0x5b) return true
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return false
  }
  return false
}

/** Endpoints whose answers are not JSON: speech is audio, a transcript may be text, SRT or VTT. */
const NON_JSON_ENDPOINTS: ReadonlySet<Endpoint> = new Set(['audio_speech', 'audio_transcriptions', 'audio_translations'])

/**
 * A 2xx answer that cannot be what `endpoint` answers: not JSON, nor an event stream (which
 * some adaptors assemble into a whole answer). Such an answer comes from something that is not
 * the provider (an HTML page behind a wrong base URL, an internal service): it fails the attempt
 * (retried on another channel) and its text goes nowhere. Undefined for an answer that may be
 * right (the adaptor then reads it); an empty one is left to the adaptor too.
 */
export function unexpectedAnswer (endpoint: Endpoint, contentType: string, body: Buffer): ClassifiedFailure | undefined {
  if (body.length === 0 || NON_JSON_ENDPOINTS.has(endpoint) || /event-stream/i.test(contentType) || looksLikeJson(body)) return undefined
  if (/^\s*(?:data|event):/.test(body.subarray(0, 64).toString('latin1'))) return undefined
  return { action: 'retry', message: nonJsonAnswer(contentType, body.length), code: 'non_json_answer' }
}

/**
 * Classifies a refused (non-2xx) answer with the adaptor's rules, its message cleaned
 * ({@link cleanUpstreamMessage}). A body that is not JSON is described (type and size), never
 * quoted, whatever the adaptor read from it; and it is never the client's fault (`'client'`
 * becomes `'retry'`): only a provider's error shape can say the request was wrong, and a page or
 * a text in its place means the channel does not answer as a provider does.
 */
export function classifyAnswer (adaptor: Pick<ProviderAdaptor, 'classifyFailure'>, status: number, contentType: string, body: string): ClassifiedFailure {
  const failure = adaptor.classifyFailure(status, body)
  if (looksLikeJson(body)) {
    failure.message = cleanUpstreamMessage(failure.message)
    return failure
  }
  failure.message = nonJsonAnswer(contentType, Buffer.byteLength(body))
  if (failure.action === 'client') failure.action = 'retry'
  return failure
}

/**
 * A failure of an upstream answer in one line, as admins read it (channel tests, status
 * reasons): `upstream answered HTTP 401 (invalid_api_key): Incorrect API key provided`.
 */
export function failureSummary (status: number, failure: Pick<ClassifiedFailure, 'message' | 'code'>): string {
  const head = `upstream answered HTTP ${status}${failure.code === undefined ? '' : ` (${cleanUpstreamMessage(failure.code)})`}`
  const message = cleanUpstreamMessage(failure.message)
  return message === '' || message === `upstream answered HTTP ${status}` ? head : `${head}: ${message}`
}
