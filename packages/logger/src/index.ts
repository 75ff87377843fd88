import type { LoggerOptions } from 'pino'

/**
 * Paths pino censors in every log line. Covers request headers that carry credentials (both as
 * Fastify's request serializer emits them and as raw header objects), channel keys and secrets in
 * logged objects. `?key=` in URLs is handled by {@link redactUrl} in the request serializer.
 */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-goog-api-key"]',
  'req.headers["proxy-authorization"]',
  // Browsers cannot set headers on a websocket: Realtime clients send the key as a subprotocol.
  'req.headers["sec-websocket-protocol"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-goog-api-key"]',
  'headers["sec-websocket-protocol"]',
  'headers.cookie',
  'authorization',
  'password',
  'key',
  'apiKey',
  'api_key',
  'secret',
  'token',
  '*.password',
  '*.key',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  'channel.key',
  'config.DATABASE_URL',
  'config.REDIS_URL',
  'config.SESSION_SECRET',
  'config.CRYPTO_SECRET'
]

export const REDACTED = '[redacted]'

/** Query parameters that carry credentials, by name in lower case (names are compared case-insensitively). */
const SECRET_PARAMS = new Set(['key', 'api_key', 'apikey', 'api-key', 'x-goog-api-key', 'access_token', 'token'])
// A query parameter: its name (literal, or percent-encoded: `?%4Bey=` is `?Key=` to every server) and value.
const QUERY_PARAM = /([?&;])([^=&#\s?;]{1,64})=([^&#\s]*)/g
const URL_PASSWORD = /(\/\/[^/:@\s]+:)[^@/\s]+@/g

/** The name of a query parameter as servers read it: percent-decoded, in lower case. */
function paramName (raw: string): string {
  if (!raw.includes('%')) return raw.toLowerCase()
  try {
    return decodeURIComponent(raw).toLowerCase()
  } catch {
    return raw.toLowerCase()
  }
}

/**
 * Removes `?key=`-style credentials and URL passwords from a URL or free text. Parameter names
 * match whatever their case or percent-encoding (`?KEY=`, `?Key=`, `?%6Bey=`).
 */
export function redactUrl (url: string): string {
  return url.replace(QUERY_PARAM, (whole, sep: string, name: string) => SECRET_PARAMS.has(paramName(name)) ? `${sep}${name}=${REDACTED}` : whole)
    .replace(URL_PASSWORD, `$1${REDACTED}@`)
}

// Credentials recognised by their shape: relay and OpenAI-style keys (sk-...), Anthropic's
// (sk-ant-...), Google API keys (AIza...), and whatever follows `Bearer `.
const SECRET_VALUE = /\b(sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,})|(\bBearer\s+)[A-Za-z0-9._~+/=-]{12,}/g

/** A key shown as its first and last two characters: `sk-ab...yz`. */
function maskKey (key: string): string {
  const head = key.startsWith('sk-') ? 5 : 4
  return `${key.slice(0, head)}...${key.slice(-2)}`
}

/**
 * Removes credentials from free text before it is logged or answered: `?key=`-style parameters
 * and URL passwords ({@link redactUrl}), keys recognised by their shape (masked as `sk-ab...yz`),
 * bearer tokens, and every value in `known` (a channel key, a client secret) wherever it appears.
 * Meant for error texts and upstream bodies, not for every log line: it scans the whole text.
 */
export function redactSecrets (text: string, known: ReadonlyArray<string | undefined> = []): string {
  let out = text
  for (const value of known) {
    if (value !== undefined && value.length >= 6) out = out.split(value).join(REDACTED)
  }
  return redactUrl(out).replace(SECRET_VALUE, (_whole, key: string | undefined, bearer: string | undefined) =>
    key !== undefined ? maskKey(key) : `${bearer ?? ''}${REDACTED}`)
}

interface RequestLike {
  method?: string
  url?: string
  hostname?: string
  ip?: string
  id?: string | number
}

/** Options for one service's pino logger (and Fastify's `logger` option). */
export function loggerOptions (opts: { service: string, level?: string }): LoggerOptions {
  return {
    level: opts.level ?? 'info',
    base: { service: opts.service },
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    hooks: {
      // Messages are free text and may quote a URL with ?key=, as may the values interpolated
      // into them (`log.info('%s', url)`); pino does not redact them itself.
      logMethod (args, method) {
        const [first, second] = args as unknown[]
        if (first instanceof Error && second === undefined) return method.apply(this, [first, redactUrl(first.message)] as Parameters<typeof method>)
        return method.apply(this, (args as unknown[]).map((a) => typeof a === 'string' ? redactUrl(a) : a) as Parameters<typeof method>)
      }
    },
    serializers: {
      req (req: RequestLike) {
        return {
          id: req.id,
          method: req.method,
          url: req.url === undefined ? undefined : redactUrl(req.url),
          ip: req.ip
        }
      },
      err (err: Error & { code?: string, statusCode?: number }) {
        return {
          type: err.name,
          code: err.code,
          statusCode: err.statusCode,
          // Error texts may quote an upstream answer or a header: scrubbed by value pattern too
          // (errors are rare, so the scan costs nothing on the relay's per-request line).
          message: redactSecrets(err.message),
          stack: err.stack === undefined ? undefined : redactSecrets(err.stack)
        }
      }
    }
  }
}
