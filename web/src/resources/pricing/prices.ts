import type { PricingItem } from '@modelgate/contracts'

/** What one model costs in the chosen group, in dollars (docs/domain.md). */
export type ModelPrice =
  | { kind: 'per_token', /** Per 1M prompt tokens. */ prompt: number, /** Per 1M completion tokens. */ completion: number }
  | { kind: 'per_call', /** Per call. */ call: number }

/**
 * Per token: prompt = model ratio x 2 x group ratio and completion = model ratio x completion
 * ratio x 2 x group ratio, per 1M tokens (a ratio of 1 is $2 per 1M tokens at 500000 quota units
 * per dollar); per call: the fixed price x group ratio.
 */
export function priceOf (item: Pick<PricingItem, 'quota_type' | 'model_ratio' | 'completion_ratio' | 'model_price'>, groupRatio: number): ModelPrice {
  if (item.quota_type === 1) return { kind: 'per_call', call: item.model_price * groupRatio }
  return { kind: 'per_token', prompt: item.model_ratio * 2 * groupRatio, completion: item.model_ratio * item.completion_ratio * 2 * groupRatio }
}

/** Dollars for display: at most 6 decimals, no trailing zeros ("$0.15", "$2.5"). */
export function usd (n: number): string {
  return `$${Number(n.toFixed(6))}`
}

/** A group's ratio (1 when GroupRatio has none). */
export function groupRatioOf (ratios: Readonly<Record<string, number>>, group: string): number {
  const r = ratios[group]
  return typeof r === 'number' && Number.isFinite(r) ? r : 1
}

/** Badge colour of a group ratio (docs/domain.md): over 5 red, over 3 orange, over 1 blue. */
export function ratioColour (ratio: number): 'error' | 'warning' | 'info' | 'default' {
  return ratio > 5 ? 'error' : ratio > 3 ? 'warning' : ratio > 1 ? 'info' : 'default'
}

/** The group shown first: the user's own when usable, else "default", else the first usable one. */
export function initialGroup (groups: readonly string[], own: string | undefined): string {
  if (own !== undefined && groups.includes(own)) return own
  if (groups.includes('default')) return 'default'
  return groups[0] ?? 'default'
}
