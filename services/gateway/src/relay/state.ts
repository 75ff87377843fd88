import { CHANNEL_STATUS, type ChannelStatus, type ConfigChange, configChannel, OptionValues } from '@modelgate/contracts'
import { type Database, findAllOptions, type Kysely } from '@modelgate/db'
import { pricingTables, type PricingTables } from '@modelgate/pricing'
import type { ChannelConfig, CredentialStore, Outbound } from '@modelgate/providers'
import { channelKeys, channelOverrides, keyFingerprint, nameList, parseJsonObject, type SecretBox } from '@modelgate/service'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { RelayError, RM } from './errors.js'

/** One credential of a channel and whether requests may use it (its `key_states` entry). */
export interface RelayKey {
  key: string
  fingerprint: string
  enabled: boolean
}

/** An enabled channel as the relay uses it. */
export interface RelayChannel {
  id: number
  type: number
  name: string
  /** One credential per line; an enabled one is picked per request. */
  keys: RelayKey[]
  /** 'polling' takes the enabled keys in turn; otherwise one at random. */
  multiKeyMode: string
  /** Turn counter of polling mode (per process). */
  nextKey: number
  /** Prompts estimated above this many tokens go to other channels; 0 means no limit. */
  maxInputTokens: number
  paramOverride: Record<string, unknown>
  headerOverride: Record<string, string>
  baseUrl: string
  other: string
  organization: string | null
  setting: Record<string, unknown>
  modelMapping: Record<string, string>
  statusCodeMapping: Record<string, string>
  autoBan: boolean
  status: ChannelStatus
  /** The channel's proxy for upstream calls; '' when it calls directly. */
  proxyUrl: string
  /** Where OAuth renewals are shared with the other replicas (Redis); absent in this process alone. */
  credentials?: CredentialStore
  /** The gateway's outbound guard, whose pools carry the channel's calls. */
  outbound?: Outbound
}

interface Candidate { channelId: number, weight: number }
/**
 * One priority tier: its candidates and their running weight totals (a tier whose weights are
 * all 0 counts each as 1), so a first pick is a binary search however many channels share it.
 */
interface Tier { candidates: Candidate[], cumulative: number[] }
/** Candidates of one group and model, highest priority tier first. */
type Tiers = Tier[]

function tierOf (candidates: Candidate[]): Tier {
  const allZero = candidates.every((c) => c.weight === 0)
  const cumulative: number[] = []
  let total = 0
  for (const c of candidates) cumulative.push(total += allZero ? 1 : c.weight)
  return { candidates, cumulative }
}

/** Looked up by client-chosen model names: no prototype, so `constructor` maps to nothing. */
function stringRecord (text: string): Record<string, string> {
  const out = Object.create(null) as Record<string, string>
  for (const [k, v] of Object.entries(parseJsonObject(text))) if (typeof v === 'string' && v !== '') out[k] = v
  return out
}

/**
 * Everything routing and pricing need, held in memory (ARCHITECTURE.md invariant 5): options, price
 * tables, the routing table and the channels. Rebuilt from Postgres when any replica announces
 * a change (invariant 4) and every `refreshMs` as a safety net.
 */
export class RelayState {
  options: OptionValues = new OptionValues(new Map())
  pricing: PricingTables = pricingTables(this.options)
  /** Groups a user may choose besides their own (UserUsableGroups). */
  usableGroups: ReadonlySet<string> = new Set()
  /** Lower-cased words refused in prompts; empty when the check is off. */
  sensitiveWords: readonly string[] = []
  /** Every channel by id, enabled or not (pinned requests name disabled ones too). */
  channels = new Map<number, RelayChannel>()
  #routes = new Map<string, Tiers>()
  /** `group\u0000model` of every model a channel of the group lists, whatever the channel's status or keys. */
  #listed = new Set<string>()
  /** group -> models it can reach */
  #modelsByGroup = new Map<string, string[]>()
  readonly #listeners: Array<(change: ConfigChange) => void> = []
  readonly #resyncListeners: Array<() => void> = []
  /** Decrypted keys by sealed text, from the last load. */
  #openedKeys = new Map<string, string[]>()

  private readonly db: Kysely<Database>
  private readonly box: SecretBox
  private readonly log: FastifyBaseLogger
  private readonly credentials: CredentialStore | undefined
  private readonly outbound: Outbound | undefined

  constructor (db: Kysely<Database>, box: SecretBox, log: FastifyBaseLogger, credentials?: CredentialStore, outbound?: Outbound) {
    this.db = db
    this.box = box
    this.log = log
    this.credentials = credentials
    this.outbound = outbound
  }

  async loadOptions (): Promise<void> {
    const options = new OptionValues(await findAllOptions(this.db))
    // Read once per change, not per request.
    const usable = options.json('UserUsableGroups')
    this.usableGroups = new Set(typeof usable === 'object' && usable !== null && !Array.isArray(usable) ? Object.keys(usable) : [])
    this.sensitiveWords = options.bool('CheckSensitiveEnabled') && options.bool('CheckSensitiveOnPromptEnabled')
      ? options.str('SensitiveWords').split('\n').map((w) => w.trim().toLowerCase()).filter((w) => w !== '')
      : []
    this.pricing = pricingTables(options)
    this.options = options
  }

  /**
   * Channels and the routing table, from the channel rows alone: a channel serves each group x
   * model of its lists (read by nameList, which also normalised them when saved) at its priority
   * and weight while enabled, the rule the abilities rows are written by (packages/db
   * replaceAbilities). Reading 10,000 channels is one query of
   * 10,000 rows, not 200,000 ability rows; keys are decrypted again only when they changed.
   */
  async loadRouting (): Promise<void> {
    const channelRows = await this.db.selectFrom('channels').selectAll().execute()
    const channels = new Map<number, RelayChannel>()
    const keys = new Map<string, string[]>()
    const byKey = new Map<string, Map<number, Candidate[]>>()
    const models = new Map<string, Set<string>>()
    const listed = new Set<string>()
    for (const c of channelRows) {
      const served = nameList(c.models)
      const groups = nameList(c.group)
      // Listed even when disabled or unreadable: such a model exists here, it is only unusable now.
      for (const group of groups) for (const model of served) listed.add(`${group}\u0000${model}`)
      let open = this.#openedKeys.get(c.key)
      if (open === undefined) {
        try {
          open = channelKeys(c, this.box)
        } catch {
          this.log.error({ channel: c.id }, 'channel key cannot be decrypted with CRYPTO_SECRET; channel skipped')
          continue
        }
      }
      keys.set(c.key, open)
      const states = c.key_states ?? {}
      const relayKeys = open.map((key) => {
        const fingerprint = keyFingerprint(key)
        const st = states[fingerprint]
        return { key, fingerprint, enabled: st === undefined || st.status === CHANNEL_STATUS.enabled }
      })
      channels.set(c.id, {
        id: c.id,
        type: c.type,
        name: c.name,
        keys: relayKeys,
        multiKeyMode: c.multi_key_mode,
        nextKey: this.channels.get(c.id)?.nextKey ?? 0,
        maxInputTokens: c.max_input_tokens,
        ...channelOverrides(c),
        baseUrl: c.base_url.replace(/\/+$/, ''),
        other: c.other,
        organization: c.openai_organization,
        setting: parseJsonObject(c.setting),
        modelMapping: stringRecord(c.model_mapping),
        statusCodeMapping: stringRecord(c.status_code_mapping),
        autoBan: c.auto_ban === 1,
        status: c.status,
        proxyUrl: c.proxy_url.trim(),
        ...(this.credentials === undefined ? {} : { credentials: this.credentials }),
        ...(this.outbound === undefined ? {} : { outbound: this.outbound })
      })
      // A channel whose every key is disabled serves nothing until one is enabled again.
      if (c.status !== CHANNEL_STATUS.enabled || !relayKeys.some((k) => k.enabled)) continue
      for (const group of groups) {
        let set = models.get(group)
        if (set === undefined) models.set(group, set = new Set())
        for (const model of served) {
          set.add(model)
          const k = `${group}\u0000${model}`
          let tiers = byKey.get(k)
          if (tiers === undefined) byKey.set(k, tiers = new Map())
          let tier = tiers.get(c.priority)
          if (tier === undefined) tiers.set(c.priority, tier = [])
          tier.push({ channelId: c.id, weight: c.weight })
        }
      }
    }
    const routes = new Map<string, Tiers>()
    for (const [k, tiers] of byKey) routes.set(k, [...tiers.entries()].sort((x, y) => y[0] - x[0]).map(([, c]) => tierOf(c)))
    this.channels = channels
    this.#openedKeys = keys
    this.#routes = routes
    this.#listed = listed
    this.#modelsByGroup = new Map([...models].filter(([, s]) => s.size > 0).map(([g, s]) => [g, [...s].sort()]))
  }

  async loadAll (): Promise<void> {
    await Promise.all([this.loadOptions(), this.loadRouting()])
  }

  /**
   * The next channel for group+model, skipping `tried`: the highest priority tier with an untried
   * channel, weighted random inside it (a weight of 0 counts as 1 when the whole tier is 0).
   */
  pick (group: string, model: string, tried: ReadonlySet<number>, random: () => number = Math.random): RelayChannel | undefined {
    const tiers = this.#routes.get(`${group}\u0000${model}`)
    if (tiers === undefined) return undefined
    if (tried.size === 0) {
      // The common case: no failover yet, the first tier, one binary search.
      const { candidates, cumulative } = tiers[0]!
      const r = random() * cumulative[cumulative.length - 1]!
      let lo = 0
      let hi = cumulative.length - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (r < cumulative[mid]!) hi = mid
        else lo = mid + 1
      }
      return this.channels.get(candidates[lo]!.channelId)
    }
    for (const { candidates } of tiers) {
      const open = candidates.filter((c) => !tried.has(c.channelId))
      if (open.length === 0) continue
      const total = open.reduce((sum, c) => sum + c.weight, 0)
      const weights = total === 0 ? open.map(() => 1) : open.map((c) => c.weight)
      let r = random() * weights.reduce((sum, w) => sum + w, 0)
      for (let i = 0; i < open.length; i++) {
        r -= weights[i]!
        if (r < 0) return this.channels.get(open[i]!.channelId)
      }
      return this.channels.get(open[open.length - 1]!.channelId)
    }
    return undefined
  }

  /** True when at least one enabled channel serves group+model. */
  serves (group: string, model: string): boolean {
    return this.#routes.has(`${group}\u0000${model}`)
  }

  /** True when a channel of the group lists the model, whatever its status (usable or not). */
  lists (group: string, model: string): boolean {
    return this.#listed.has(`${group}\u0000${model}`)
  }

  /**
   * Refuses a request for a model no enabled channel of the group serves. Clients act on the
   * difference: a model no channel of the group lists at all is 404 `model_not_found` (the
   * caller's mistake; SDKs and Claude Code do not retry it), while one whose channels are all
   * disabled is 503 `no_available_channel` (worth retrying later).
   */
  checkServes (group: string, model: string): void {
    if (this.serves(group, model)) return
    if (!this.lists(group, model)) throw new RelayError(404, 'invalid_request_error', 'model_not_found', RM.modelNotFound, { model, group })
    throw new RelayError(503, 'service_unavailable', 'no_available_channel', RM.noChannel, { model, group })
  }

  modelsOf (group: string): string[] {
    return this.#modelsByGroup.get(group) ?? []
  }

  onChange (listener: (change: ConfigChange) => void): void {
    this.#listeners.push(listener)
  }

  /**
   * Called on every full reload (periodic, or after the change channel reconnected): whatever
   * caches entries a lost change message would have dropped drops them all here.
   */
  onResync (listener: () => void): void {
    this.#resyncListeners.push(listener)
  }

  #resync (): void {
    for (const l of this.#resyncListeners) l()
    this.loadAll().catch((err: unknown) => this.log.error({ err }, 'periodic state refresh failed'))
  }

  /** Subscribes to change announcements and reloads what changed. Returns a stop function. */
  async follow (redis: Redis, keyPrefix: string, refreshMs: number): Promise<() => Promise<void>> {
    const sub = redis.duplicate({ lazyConnect: true, enableAutoPipelining: false })
    sub.on('error', (err: Error) => this.log.warn({ err }, 'config subscriber error'))
    sub.on('message', (_channel: string, text: string) => {
      let change: ConfigChange
      try {
        change = JSON.parse(text) as ConfigChange
      } catch {
        return
      }
      const reload = change.kind === 'options' ? this.loadOptions() : change.kind === 'channel' ? this.loadRouting() : undefined
      reload?.catch((err: unknown) => this.log.error({ err }, 'reload after change failed'))
      for (const l of this.#listeners) l(change)
    })
    // Change messages published while the subscriber was away are lost: after a reconnection
    // (Redis restarted, network cut) everything is reloaded at once, as on the periodic refresh.
    let subscribedOnce = false
    sub.on('ready', () => {
      if (!subscribedOnce) return
      this.log.info('config subscriber reconnected: reloading state')
      this.#resync()
    })
    await sub.connect()
    await sub.subscribe(configChannel(keyPrefix))
    subscribedOnce = true
    const timer = setInterval(() => { this.#resync() }, refreshMs)
    timer.unref()
    return async () => {
      clearInterval(timer)
      sub.disconnect()
    }
  }
}

/**
 * The key a request uses: one of the channel's enabled keys not in `skip` (keys that already
 * failed this request), at random or in turn by the channel's mode; undefined when none is left.
 */
export function pickKey (c: RelayChannel, skip: ReadonlySet<string> | undefined, random: () => number = Math.random): RelayKey | undefined {
  const { keys } = c
  if (keys.length === 1) {
    const only = keys[0]!
    return only.enabled && skip?.has(only.fingerprint) !== true ? only : undefined
  }
  const usable = keys.filter((k) => k.enabled && skip?.has(k.fingerprint) !== true)
  if (usable.length === 0) return undefined
  if (c.multiKeyMode === 'polling') return usable[c.nextKey++ % usable.length]
  return usable[Math.floor(random() * usable.length)]
}

/** The channel as an adaptor sees it, with `key` (by default one picked by {@link pickKey}). */
export function channelConfig (c: RelayChannel, key: RelayKey | undefined = pickKey(c, undefined)): ChannelConfig {
  return {
    id: c.id,
    type: c.type,
    key: key?.key ?? '',
    baseUrl: c.baseUrl,
    other: c.other,
    organization: c.organization,
    setting: c.setting,
    proxyUrl: c.proxyUrl,
    paramOverride: c.paramOverride,
    headerOverride: c.headerOverride,
    ...(c.credentials === undefined ? {} : { credentials: c.credentials }),
    ...(c.outbound === undefined ? {} : { outbound: c.outbound })
  }
}
