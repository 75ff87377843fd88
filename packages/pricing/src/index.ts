import type { OptionValues } from '@modelgate/contracts'

/** Quota units per dollar by default (QuotaPerUnit). A model ratio of 1 is $2 per 1M prompt tokens. */
export const DEFAULT_QUOTA_PER_UNIT = 500_000

/** The price tables of the options (ModelRatio, CompletionRatio, ModelPrice, GroupRatio). */
export interface PricingTables {
  modelRatio: Readonly<Record<string, number>>
  completionRatio: Readonly<Record<string, number>>
  /** Dollars per call. */
  modelPrice: Readonly<Record<string, number>>
  groupRatio: Readonly<Record<string, number>>
  /** Cached prompt tokens relative to ordinary prompt tokens; 1 when absent. */
  cacheRatio: Readonly<Record<string, number>>
  /** Prompt tokens written to the provider's cache relative to ordinary prompt tokens; 1 when absent. */
  createCacheRatio: Readonly<Record<string, number>>
  /** Audio prompt tokens relative to text prompt tokens; 1 when absent. */
  audioRatio: Readonly<Record<string, number>>
  /** Audio completion tokens relative to audio prompt tokens; 1 when absent. */
  audioCompletionRatio: Readonly<Record<string, number>>
  quotaPerUnit: number
}

/** Looked up by client-chosen model names: no prototype, so `constructor` has no price. */
function numbers (value: unknown): Record<string, number> {
  const out = Object.create(null) as Record<string, number>
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return out
  for (const [k, v] of Object.entries(value)) if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[k] = v
  return out
}

/** Reads the tables from options; malformed entries are ignored (the option API refuses them anyway). */
export function pricingTables (options: OptionValues): PricingTables {
  return {
    modelRatio: numbers(options.json('ModelRatio')),
    completionRatio: numbers(options.json('CompletionRatio')),
    modelPrice: numbers(options.json('ModelPrice')),
    groupRatio: numbers(options.json('GroupRatio')),
    cacheRatio: numbers(options.json('CacheRatio')),
    createCacheRatio: numbers(options.json('CreateCacheRatio')),
    audioRatio: numbers(options.json('AudioRatio')),
    audioCompletionRatio: numbers(options.json('AudioCompletionRatio')),
    quotaPerUnit: options.num('QuotaPerUnit') > 0 ? options.num('QuotaPerUnit') : DEFAULT_QUOTA_PER_UNIT
  }
}

/** How one request of one model in one group is priced. */
export type Price =
  | {
    kind: 'per_token', modelRatio: number, completionRatio: number, groupRatio: number, cacheRatio: number,
    createCacheRatio: number, audioRatio: number, audioCompletionRatio: number
  }
  | { kind: 'per_call', modelPrice: number, groupRatio: number, quotaPerUnit: number }

/**
 * The price of `model` for `group`, or undefined when the model has neither a ratio nor a price:
 * an unpriced model is refused rather than billed at a guessed default. A per-call price wins
 * over ratios. A group without a ratio costs 1x.
 */
export function priceOf (tables: PricingTables, model: string, group: string): Price | undefined {
  const groupRatio = tables.groupRatio[group] ?? 1
  const modelPrice = tables.modelPrice[model]
  if (modelPrice !== undefined) return { kind: 'per_call', modelPrice, groupRatio, quotaPerUnit: tables.quotaPerUnit }
  const modelRatio = tables.modelRatio[model]
  if (modelRatio === undefined) return undefined
  return {
    kind: 'per_token',
    modelRatio,
    completionRatio: tables.completionRatio[model] ?? 1,
    groupRatio,
    cacheRatio: tables.cacheRatio[model] ?? 1,
    createCacheRatio: tables.createCacheRatio[model] ?? 1,
    audioRatio: tables.audioRatio[model] ?? 1,
    audioCompletionRatio: tables.audioCompletionRatio[model] ?? 1
  }
}

/**
 * Token counts of one request. `cachedTokens` and `audioPromptTokens` are parts of the prompt,
 * `audioCompletionTokens` a part of the completion (as OpenAI reports them).
 */
export interface Usage {
  promptTokens: number
  completionTokens: number
  cachedTokens?: number
  /** Prompt tokens written to the provider's cache (a part of the prompt, apart from cachedTokens). */
  cacheWriteTokens?: number
  audioPromptTokens?: number
  audioCompletionTokens?: number
}

/**
 * Cost in integer quota units. Per token: groupRatio x modelRatio x (prompt + completion x
 * completionRatio), with cached prompt tokens at cacheRatio, prompt tokens written to the cache at
 * createCacheRatio, audio prompt tokens at audioRatio
 * and audio completion tokens at audioRatio x audioCompletionRatio; per call: modelPrice x
 * quotaPerUnit x groupRatio. Rounded to the nearest unit; a request that used tokens of a
 * non-free model costs at least 1.
 */
export function costOf (price: Price, usage: Usage): number {
  if (price.kind === 'per_call') return Math.max(0, Math.round(price.modelPrice * price.quotaPerUnit * price.groupRatio))
  const prompt = Math.max(0, usage.promptTokens)
  const cached = Math.min(prompt, Math.max(0, usage.cachedTokens ?? 0))
  const audioIn = Math.min(prompt - cached, Math.max(0, usage.audioPromptTokens ?? 0))
  const written = Math.min(prompt - cached - audioIn, Math.max(0, usage.cacheWriteTokens ?? 0))
  const completion = Math.max(0, usage.completionTokens)
  const audioOut = Math.min(completion, Math.max(0, usage.audioCompletionTokens ?? 0))
  const weighted = (prompt - cached - audioIn - written) + cached * price.cacheRatio + written * price.createCacheRatio + audioIn * price.audioRatio +
    (completion - audioOut) * price.completionRatio + audioOut * price.audioRatio * price.audioCompletionRatio
  const exact = weighted * price.modelRatio * price.groupRatio
  const rounded = Math.round(exact)
  return rounded === 0 && exact > 0 ? 1 : rounded
}

/** The `other` JSON of a log row: which ratios or price produced the cost. */
export function priceDetails (price: Price): Record<string, number> {
  return price.kind === 'per_call'
    ? { model_price: price.modelPrice, group_ratio: price.groupRatio, model_ratio: 0, completion_ratio: 0 }
    : {
        model_ratio: price.modelRatio,
        completion_ratio: price.completionRatio,
        group_ratio: price.groupRatio,
        model_price: -1,
        cache_ratio: price.cacheRatio,
        create_cache_ratio: price.createCacheRatio,
        audio_ratio: price.audioRatio,
        audio_completion_ratio: price.audioCompletionRatio
      }
}

/** Dollars per 1M tokens shown on the pricing page: ratio x 2 x group ratio (docs/domain.md). */
export function dollarsPerMillion (modelRatio: number, groupRatio: number, completionRatio = 1): { prompt: number, completion: number } {
  return { prompt: modelRatio * 2 * groupRatio, completion: modelRatio * completionRatio * 2 * groupRatio }
}
