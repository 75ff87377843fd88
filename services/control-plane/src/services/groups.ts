import type { OptionValues } from '@modelgate/contracts'

function record (value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}
}

/** Group -> ratio from GroupRatio (non-numeric entries ignored). */
export function groupRatios (options: OptionValues): Record<string, number> {
  const out: Record<string, number> = Object.create(null) as Record<string, number>
  for (const [group, ratio] of Object.entries(record(options.json('GroupRatio')))) {
    if (typeof ratio === 'number' && Number.isFinite(ratio)) out[group] = ratio
  }
  return out
}

/**
 * Groups a user may pick for tokens: UserUsableGroups (group -> description) plus the user's own
 * group (none for an anonymous caller), each with its ratio (1 when GroupRatio has none).
 */
export function usableGroups (options: OptionValues, ownGroup: string | undefined): Record<string, { desc: string, ratio: number }> {
  const ratios = groupRatios(options)
  // No prototype: a group named "constructor" or "__proto__" must not look usable to `in`.
  const out: Record<string, { desc: string, ratio: number }> = Object.create(null) as Record<string, { desc: string, ratio: number }>
  for (const [group, desc] of Object.entries(record(options.json('UserUsableGroups')))) {
    out[group] = { desc: typeof desc === 'string' ? desc : group, ratio: ratios[group] ?? 1 }
  }
  if (ownGroup !== undefined) out[ownGroup] ??= { desc: ownGroup, ratio: ratios[ownGroup] ?? 1 }
  return out
}
