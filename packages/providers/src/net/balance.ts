import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { ChannelConfig, ProviderAdaptor, UpstreamRequest } from '../core/adaptor.js'
import { at, isRecord, list, num, parseJson, str } from '../core/json.js'
import { withOverrides } from '../core/overrides.js'
import { call, failureMessage } from './probe.js'
import { adaptorFor } from '../core/registry.js'

/**
 * Yuan per US dollar used to report balances that providers keep in CNY (DeepSeek, SiliconCloud,
 * Moonshot's Chinese platform). A fixed rate, the same as the default top-up `Price` option
 * (docs/domain.md): a channel balance is an estimate to watch, not an amount to bill.
 */
export const CNY_PER_USD = 7.3

/** Largest balance answer read: real ones are a few hundred bytes. */
const BALANCE_ANSWER_MAX_BYTES = 1024 * 1024
/** Longest provider message kept in a failure. */
const MESSAGE_MAX_CHARS = 200
/** Days of usage the OpenAI billing query sums (the usage endpoint's longest window is 100 days). */
const USAGE_WINDOW_DAYS = 100

/** Outcome of a balance query. */
export type ChannelBalance =
  /** The account's remaining balance in US dollars (may be negative when overdrawn). */
  | { status: 'ok', usd: number }
  /** The channel's type has no billing endpoint we know of; nothing was sent. */
  | { status: 'unsupported' }
  /** The query could not be sent or failed; `message` is safe to show an admin (never the key). */
  | { status: 'failed', message: string }

/** A failure with a message safe to show an admin. */
class BalanceFailure extends Error {}

/** GETs `url` with the model list's headers; the JSON answer, or a BalanceFailure. */
type Getter = (url: string) => Promise<unknown>

interface BalanceQuery {
  /**
   * Reads the balance given `v1`, the channel's OpenAI-style API root (`https://host/v1`, derived
   * from its model list URL so base URLs resolve exactly as for every other request).
   */
  read: (v1: string, get: Getter) => Promise<number>
}

function amount (value: unknown): number | undefined {
  if (typeof value === 'string' && value.trim() !== '') return num(Number(value))
  return num(value)
}

function shapeError (provider: string, field: string): BalanceFailure {
  return new BalanceFailure(`the ${provider} balance answer has no usable ${field}`)
}

/** `YYYY-MM-DD` (UTC) `days` from now. */
function utcDate (days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)
}

/** True when `v1` is on `host` (a provider's international platform, which bills in USD). */
function onHost (v1: string, host: string): boolean {
  try {
    return new URL(v1).hostname.toLowerCase() === host
  } catch {
    return false
  }
}

/**
 * OpenAI's dashboard billing API, also served by many OpenAI-compatible resellers: the
 * subscription's `hard_limit_usd` less the usage of the last 100 days (`total_usage`, in cents).
 */
const openAIBilling: BalanceQuery = {
  read: async (v1, get) => {
    const [subscription, usage] = await Promise.all([
      get(`${v1}/dashboard/billing/subscription`),
      get(`${v1}/dashboard/billing/usage?start_date=${utcDate(-USAGE_WINDOW_DAYS)}&end_date=${utcDate(1)}`)
    ])
    const limit = amount(at(subscription, 'hard_limit_usd'))
    if (limit === undefined) throw shapeError('OpenAI', 'hard_limit_usd')
    const cents = amount(at(usage, 'total_usage'))
    if (cents === undefined) throw shapeError('OpenAI', 'total_usage')
    return limit - cents / 100
  }
}

/**
 * DeepSeek's `GET /user/balance` (at the origin, not under `/v1`): `balance_infos[]` with a
 * `currency` and `total_balance` (a decimal string). The USD entry when there is one, else the
 * CNY entry converted at {@link CNY_PER_USD}.
 */
const deepSeekBalance: BalanceQuery = {
  read: async (v1, get) => {
    const infos = list(at(await get(`${v1.slice(0, -'/v1'.length)}/user/balance`), 'balance_infos')).filter(isRecord)
    const usd = infos.find((i) => str(i.currency)?.toUpperCase() === 'USD')
    const cny = infos.find((i) => str(i.currency)?.toUpperCase() === 'CNY')
    const usdAmount = amount(usd?.total_balance)
    if (usdAmount !== undefined) return usdAmount
    const cnyAmount = amount(cny?.total_balance)
    if (cnyAmount !== undefined) return cnyAmount / CNY_PER_USD
    throw shapeError('DeepSeek', 'balance_infos (USD or CNY total_balance)')
  }
}

/**
 * SiliconCloud's `GET /v1/user/info`: `data.totalBalance` (a decimal string), in CNY on
 * api.siliconflow.cn (converted at {@link CNY_PER_USD}) and in USD on api.siliconflow.com.
 */
const siliconCloudBalance: BalanceQuery = {
  read: async (v1, get) => {
    const total = amount(at(await get(`${v1}/user/info`), 'data', 'totalBalance'))
    if (total === undefined) throw shapeError('SiliconCloud', 'data.totalBalance')
    return onHost(v1, 'api.siliconflow.com') ? total : total / CNY_PER_USD
  }
}

/**
 * Moonshot's `GET /v1/users/me/balance`: `data.available_balance`, in CNY on api.moonshot.cn
 * (converted at {@link CNY_PER_USD}) and in USD on api.moonshot.ai.
 */
const moonshotBalance: BalanceQuery = {
  read: async (v1, get) => {
    const available = amount(at(await get(`${v1}/users/me/balance`), 'data', 'available_balance'))
    if (available === undefined) throw shapeError('Moonshot', 'data.available_balance')
    return onHost(v1, 'api.moonshot.ai') ? available : available / CNY_PER_USD
  }
}

/**
 * Channel types with a billing endpoint: OpenAI, custom (with a bare origin: resellers of the
 * OpenAI protocol serve its billing API), Moonshot, SiliconCloud and DeepSeek.
 */
const QUERIES: ReadonlyMap<number, BalanceQuery> = new Map([
  [CHANNEL_TYPE.openai, openAIBilling],
  [CHANNEL_TYPE.custom, openAIBilling],
  [CHANNEL_TYPE.moonshot, moonshotBalance],
  [CHANNEL_TYPE.siliconcloud, siliconCloudBalance],
  [CHANNEL_TYPE.deepseek, deepSeekBalance]
])

/** Whether channels of `type` can report their balance. */
export function balanceSupported (type: number): boolean {
  return QUERIES.has(type) && adaptorFor(type) !== undefined
}

/** The provider's error message (scrubbed of links and keys by the adaptor) with the status, kept short. */
function httpFailure (adaptor: ProviderAdaptor, status: number, body: string): BalanceFailure {
  const generic = `upstream answered HTTP ${status}`
  const message = adaptor.classifyFailure(status, body).message
  if (message === generic) return new BalanceFailure(generic)
  const short = message.length > MESSAGE_MAX_CHARS ? `${message.slice(0, MESSAGE_MAX_CHARS - 1)}…` : message
  return new BalanceFailure(`${generic}: ${short}`)
}

/**
 * Asks the provider behind `channel` for the account's balance, in US dollars. The requests go
 * through the channel's proxy with the headers of its model list (key, organization) and its
 * header override, each bounded by `timeoutMs` and 1 MiB. Upstream failures come back as
 * `failed`, never thrown.
 *
 * The billing URLs sit beside the model list (`{base}/v1/models`), so a custom channel
 * whose URL is a full endpoint (a path or `{model}`) has none and fails.
 */
export async function queryBalance (channel: ChannelConfig, timeoutMs = 30_000): Promise<ChannelBalance> {
  const query = QUERIES.get(channel.type)
  const adaptor = adaptorFor(channel.type)
  if (query === undefined || adaptor === undefined) return { status: 'unsupported' }
  let listing: UpstreamRequest | undefined
  try {
    listing = adaptor.listModelsRequest(channel)
  } catch (err) {
    return { status: 'failed', message: (err as Error).message }
  }
  const suffix = '/v1/models'
  if (listing === undefined || !listing.url.endsWith(suffix)) {
    return { status: 'failed', message: 'the channel URL is a full endpoint URL; a balance is read from a base URL' }
  }
  const v1 = listing.url.slice(0, -'/models'.length)
  // Body parameters do not apply to a GET; header overrides may carry the upstream's authentication.
  const overridden = { ...channel, paramOverride: undefined }
  const get: Getter = async (url) => {
    let res: { status: number, body: Buffer }
    try {
      res = await call(withOverrides(overridden, { method: 'GET', url, headers: listing.headers }), channel, timeoutMs, BALANCE_ANSWER_MAX_BYTES)
    } catch (err) {
      throw new BalanceFailure(failureMessage(err, timeoutMs))
    }
    const text = res.body.toString('utf8')
    if (res.status < 200 || res.status >= 300) throw httpFailure(adaptor, res.status, text)
    const json = parseJson(text)
    if (!isRecord(json)) throw new BalanceFailure('the upstream balance answer is not a JSON object')
    return json
  }
  try {
    const usd = await query.read(v1, get)
    // Cents and yuan divisions leave binary noise (12.340000000000002); a millionth of a dollar is plenty.
    return { status: 'ok', usd: Math.round(usd * 1e6) / 1e6 }
  } catch (err) {
    if (err instanceof BalanceFailure) return { status: 'failed', message: err.message }
    throw err
  }
}
