import type { ChannelConfig, UpstreamRequest } from '../core/adaptor.js'
import { malformedKey } from '../net/credentials.js'
import { resolveBaseUrl } from '../openai-compatible/api.js'

/**
 * Nominal default base URL (us-east-1's runtime). Channels without a base URL call their own
 * region's `https://bedrock-runtime.{region}.amazonaws.com`.
 */
export const BEDROCK_RUNTIME_BASE_URL = 'https://bedrock-runtime.us-east-1.amazonaws.com'

/** The SigV4 signing name of both Bedrock endpoints (runtime and control plane). */
const BEDROCK_SERVICE = 'bedrock'

/** Model list of the control plane: Anthropic's text models of the region. */
export const BEDROCK_MODELS_PATH = '/foundation-models?byProvider=anthropic&byOutputModality=TEXT'

/** An AWS region name (`us-east-1`, `ap-southeast-2`, `us-gov-west-1`); checked since it goes into a host name. */
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/

/** What a channel key holds. */
interface AwsCredentials {
  accessKeyId: string
  secretAccessKey: string
  /** Temporary credentials (STS) come with a session token. */
  sessionToken?: string
  region: string
}

/**
 * The credentials of a channel key written `ACCESS_KEY_ID|SECRET_ACCESS_KEY|REGION`, or
 * `ACCESS_KEY_ID|SECRET_ACCESS_KEY|REGION|SESSION_TOKEN` for temporary credentials. The region may
 * be left out (`ACCESS_KEY_ID|SECRET_ACCESS_KEY`, or empty between the bars before a session
 * token): the channel's `other` then names it. A region in the key wins over `other`, so the keys
 * of one multi-key channel may live in different regions. Anything else is refused as malformed.
 */
export function awsCredentials (channel: ChannelConfig): AwsCredentials {
  const parts = channel.key.trim().split('|').map((part) => part.trim())
  const [accessKeyId = '', secretAccessKey = '', keyRegion = '', sessionToken = ''] = parts
  if (parts.length < 2 || parts.length > 4 || accessKeyId === '' || secretAccessKey === '' || /\s/.test(accessKeyId + secretAccessKey + sessionToken)) {
    throw malformedKey('the AWS key must be written ACCESS_KEY_ID|SECRET_ACCESS_KEY|REGION (optionally |SESSION_TOKEN)')
  }
  const region = keyRegion || channel.other.trim()
  if (region === '') throw malformedKey('the AWS key names no region: write ACCESS_KEY_ID|SECRET_ACCESS_KEY|REGION, or set the region in the channel\'s other field')
  if (!REGION.test(region)) throw malformedKey(`"${region.slice(0, 40)}" is not an AWS region name`)
  const credentials: AwsCredentials = { accessKeyId, secretAccessKey, region }
  if (sessionToken !== '') credentials.sessionToken = sessionToken
  return credentials
}

/** The channel's base URL (a VPC endpoint, a test server), else the region's Bedrock runtime. */
export function runtimeBase (channel: ChannelConfig, region: string): string {
  return channel.baseUrl.trim() === '' ? `https://bedrock-runtime.${region}.amazonaws.com` : resolveBaseUrl(channel, '')
}

/** The channel's base URL, else the region's Bedrock control plane (model list). */
export function controlBase (channel: ChannelConfig, region: string): string {
  return channel.baseUrl.trim() === '' ? `https://bedrock.${region}.amazonaws.com` : resolveBaseUrl(channel, '')
}

/** InvokeModel or InvokeModelWithResponseStream of `modelId` (escaped: ids hold `:`, ARNs `/`). */
export function invokeUrl (base: string, modelId: string, stream: boolean): string {
  return `${base}/model/${encodeURIComponent(modelId)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`
}

/** Headers the signature sets, dropped from the request before signing it again. */
const SIGNATURE_HEADERS: ReadonlySet<string> = new Set(['authorization', 'host', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token'])

/**
 * Signs `up` with AWS Signature Version 4 (service `bedrock`, the key's region): `x-amz-date`,
 * `x-amz-content-sha256` of the final body, the session token when there is one, and
 * `Authorization` over every header the request carries plus `host` (which the HTTP client then
 * sends from the URL, so it is not returned). Called after the channel's overrides, so the body
 * and headers signed are those sent.
 */
export async function signAws (channel: ChannelConfig, up: UpstreamRequest): Promise<UpstreamRequest> {
  const credentials = awsCredentials(channel)
  // Loaded on the first signature: a gateway without AWS channels does not carry the signer.
  const [{ SignatureV4 }, { Sha256 }] = await Promise.all([import('@smithy/signature-v4'), import('@aws-crypto/sha256-js')])
  const url = new URL(up.url)
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(up.headers)) if (!SIGNATURE_HEADERS.has(name.toLowerCase())) headers[name] = value
  headers.host = url.host
  const query: Record<string, string | string[]> = {}
  for (const [name, value] of url.searchParams) {
    const known = query[name]
    query[name] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value]
  }
  const signer = new SignatureV4({
    service: BEDROCK_SERVICE,
    region: credentials.region,
    credentials: {
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken })
    },
    sha256: Sha256
  })
  const signed = await signer.sign({
    method: up.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port === '' ? {} : { port: Number(url.port) }),
    // As sent (escaped once); the signer escapes it again, as SigV4 wants for every service but S3.
    path: url.pathname,
    query,
    headers,
    body: up.body
  })
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(signed.headers)) if (name !== 'host') out[name] = value
  return { ...up, headers: out }
}
