import { LOG_TYPE } from '@modelgate/contracts'
import type { LogOther } from './types'

/** One weighted token count of the per-token formula. */
export type Term =
  | { kind: 'prompt', tokens: number }
  | { kind: 'cached', tokens: number, ratio: number }
  | { kind: 'cacheWrite', tokens: number, ratio: number }
  | { kind: 'audioPrompt', tokens: number, ratio: number }
  | { kind: 'completion', tokens: number, ratio: number }
  | { kind: 'audioCompletion', tokens: number, ratio: number, completionRatio: number }

/** How a consume row's quota came about, rebuilt from the ratios the log recorded. */
export type Breakdown =
  | {
    kind: 'per_token'
    terms: Term[]
    /** Sum of the weighted terms (prompt-token equivalents). */
    weighted: number
    modelRatio: number
    groupRatio: number
    /** weighted x model ratio x group ratio, before rounding to whole quota units. */
    exact: number
  }
  | {
    kind: 'per_call'
    /** Dollars per call. */
    modelPrice: number
    groupRatio: number
    /** modelPrice x groupRatio. */
    dollars: number
    /** The quota units that price comes to (dollars x QuotaPerUnit). */
    exact: number
  }

const nonNegative = (n: number | undefined): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0)
const ratio = (n: number | undefined): number => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : 1)

/**
 * The billing formula of a log row, mirroring the gateway's cost rule (docs/domain.md): per
 * token, group ratio x model ratio x (prompt + completion x completion ratio), with cached prompt
 * tokens at the cache ratio, tokens written to the cache at the cache write ratio and audio tokens at the audio ratios; per call, price x group ratio.
 * Undefined when the row carries no price (recharge, manage, system rows, old rows).
 */
export function breakdownOf (log: { prompt_tokens: number, completion_tokens: number, other: LogOther | null }, quotaPerUnit: number): Breakdown | undefined {
  const o = log.other
  if (o === null) return undefined
  const groupRatio = ratio(o.group_ratio)
  if (typeof o.model_price === 'number' && o.model_price >= 0) {
    const dollars = o.model_price * groupRatio
    return { kind: 'per_call', modelPrice: o.model_price, groupRatio, dollars, exact: dollars * quotaPerUnit }
  }
  if (typeof o.model_ratio !== 'number') return undefined
  const prompt = nonNegative(log.prompt_tokens)
  const completion = nonNegative(log.completion_tokens)
  const cached = Math.min(prompt, nonNegative(o.cached_tokens))
  const audioIn = o.audio === true ? Math.min(prompt - cached, nonNegative(o.audio_input)) : 0
  const written = Math.min(prompt - cached - audioIn, nonNegative(o.cache_write_tokens))
  const audioOut = o.audio === true ? Math.min(completion, nonNegative(o.audio_output)) : 0
  const terms: Term[] = [{ kind: 'prompt', tokens: prompt - cached - audioIn - written }]
  if (cached > 0) terms.push({ kind: 'cached', tokens: cached, ratio: ratio(o.cache_ratio) })
  if (written > 0) terms.push({ kind: 'cacheWrite', tokens: written, ratio: ratio(o.create_cache_ratio) })
  if (audioIn > 0) terms.push({ kind: 'audioPrompt', tokens: audioIn, ratio: ratio(o.audio_ratio) })
  terms.push({ kind: 'completion', tokens: completion - audioOut, ratio: ratio(o.completion_ratio) })
  if (audioOut > 0) terms.push({ kind: 'audioCompletion', tokens: audioOut, ratio: ratio(o.audio_ratio), completionRatio: ratio(o.audio_completion_ratio) })
  const weighted = terms.reduce((sum, t) => sum + weightOf(t), 0)
  return { kind: 'per_token', terms, weighted, modelRatio: o.model_ratio, groupRatio, exact: weighted * o.model_ratio * groupRatio }
}

function weightOf (t: Term): number {
  switch (t.kind) {
    case 'prompt': return t.tokens
    case 'audioCompletion': return t.tokens * t.ratio * t.completionRatio
    default: return t.tokens * t.ratio
  }
}

/** A ratio or amount for display: at most 6 decimals, no trailing zeros. */
export function num (n: number): string {
  return String(Number(n.toFixed(6)))
}

/** Colour of a duration in seconds (docs/domain.md): log duration under 101 s green, under 300 orange, else red. */
export function durationColour (seconds: number): 'success' | 'warning' | 'error' {
  return seconds < 101 ? 'success' : seconds < 300 ? 'warning' : 'error'
}

/** Colour of a first-response time in seconds: under 3 s green, under 10 s orange, else red. */
export function firstResponseColour (seconds: number): 'success' | 'warning' | 'error' {
  return seconds < 3 ? 'success' : seconds < 10 ? 'warning' : 'error'
}

/** Whether a log row records a model call (timings, tokens and streaming apply). */
export const isModelCall = (type: number): boolean => type === LOG_TYPE.unknown || type === LOG_TYPE.consume || type === LOG_TYPE.error
