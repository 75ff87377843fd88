import { createHash, createHmac } from 'node:crypto'

/** What a TC3-HMAC-SHA256 signature covers. */
interface Tc3Request {
  secretId: string
  secretKey: string
  /** The product's service name (`hunyuan`), the second part of the credential scope. */
  service: string
  /** The `Host` header as sent (with its port when not the default). */
  host: string
  /** The `Content-Type` header as sent. */
  contentType: string
  /** Seconds since the epoch (`X-TC-Timestamp`); the scope's date is its UTC day. */
  timestamp: number
  method: 'GET' | 'POST' | 'DELETE'
  /** The query string without `?` (empty for POST). */
  query: string
  /** The body exactly as sent. */
  payload: string | Buffer
}

/** The signature, the Authorization header, and the intermediate hashes (for checks against Tencent's worked example). */
interface Tc3Signature {
  hashedPayload: string
  hashedCanonicalRequest: string
  signature: string
  authorization: string
}

const ALGORITHM = 'TC3-HMAC-SHA256'
const SIGNED_HEADERS = 'content-type;host'

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex')
const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest()

/**
 * Tencent Cloud API 3.0's TC3-HMAC-SHA256 signature: the canonical request (method, `/`, the
 * query, the `content-type` and `host` headers, the signed header names, the payload's SHA-256),
 * the string to sign (algorithm, timestamp, `date/service/tc3_request`, the canonical request's
 * SHA-256), the key derived as HMAC("TC3" + SecretKey, date) → service → `tc3_request`, and the
 * HMAC of the string to sign with it, in hex.
 */
export function tc3Sign (req: Tc3Request): Tc3Signature {
  const date = new Date(req.timestamp * 1000).toISOString().slice(0, 10)
  const hashedPayload = sha256Hex(req.payload)
  const canonicalHeaders = `content-type:${req.contentType.trim().toLowerCase()}\nhost:${req.host.trim().toLowerCase()}\n`
  const canonicalRequest = [req.method, '/', req.query, canonicalHeaders, SIGNED_HEADERS, hashedPayload].join('\n')
  const hashedCanonicalRequest = sha256Hex(canonicalRequest)
  const scope = `${date}/${req.service}/tc3_request`
  const stringToSign = [ALGORITHM, String(req.timestamp), scope, hashedCanonicalRequest].join('\n')
  const signingKey = hmac(hmac(hmac(`TC3${req.secretKey}`, date), req.service), 'tc3_request')
  const signature = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex')
  return {
    hashedPayload,
    hashedCanonicalRequest,
    signature,
    authorization: `${ALGORITHM} Credential=${req.secretId}/${scope}, SignedHeaders=${SIGNED_HEADERS}, Signature=${signature}`
  }
}
