/** The three maps the visual pricing editor works on (option values, parsed). */
export interface PricingMaps {
  ModelPrice: Record<string, number>
  ModelRatio: Record<string, number>
  CompletionRatio: Record<string, number>
}

export const PRICING_KEYS = ['ModelPrice', 'ModelRatio', 'CompletionRatio'] as const

/** One model of the visual editor: a fixed price per call, or a ratio with an optional completion ratio. */
export interface PricingRow {
  name: string
  price?: number
  ratio?: number
  completion?: number
}

/** Every model named in any of the maps, by name. */
export function rowsOf (maps: PricingMaps): PricingRow[] {
  const names = new Set([...Object.keys(maps.ModelRatio), ...Object.keys(maps.ModelPrice), ...Object.keys(maps.CompletionRatio)])
  return [...names].sort((a, b) => a.localeCompare(b)).map((name) => ({
    name,
    price: maps.ModelPrice[name],
    ratio: maps.ModelRatio[name],
    completion: maps.CompletionRatio[name]
  }))
}

function without (map: Record<string, number>, name: string): Record<string, number> {
  const copy = { ...map }
  delete copy[name]
  return copy
}

/**
 * The maps with `row` stored (replacing `previous` when a row is renamed). A priced row is stored
 * only as a price: the relay bills a priced model per call whatever its ratios say, so ratios left
 * behind would only mislead the next reader.
 */
export function putRow (maps: PricingMaps, row: PricingRow, previous = row.name): PricingMaps {
  const base: PricingMaps = previous === row.name
    ? maps
    : { ModelPrice: without(maps.ModelPrice, previous), ModelRatio: without(maps.ModelRatio, previous), CompletionRatio: without(maps.CompletionRatio, previous) }
  if (row.price !== undefined) {
    return {
      ModelPrice: { ...base.ModelPrice, [row.name]: row.price },
      ModelRatio: without(base.ModelRatio, row.name),
      CompletionRatio: without(base.CompletionRatio, row.name)
    }
  }
  return {
    ModelPrice: without(base.ModelPrice, row.name),
    ModelRatio: row.ratio === undefined ? without(base.ModelRatio, row.name) : { ...base.ModelRatio, [row.name]: row.ratio },
    CompletionRatio: row.completion === undefined ? without(base.CompletionRatio, row.name) : { ...base.CompletionRatio, [row.name]: row.completion }
  }
}

/** The maps without the model `name`. */
export function removeRow (maps: PricingMaps, name: string): PricingMaps {
  return { ModelPrice: without(maps.ModelPrice, name), ModelRatio: without(maps.ModelRatio, name), CompletionRatio: without(maps.CompletionRatio, name) }
}

/** A price or ratio typed by the admin: undefined when blank, 'invalid' unless a number >= 0. */
export function parseAmount (text: string): number | undefined | 'invalid' {
  const trimmed = text.trim()
  if (trimmed === '') return undefined
  const n = Number(trimmed)
  return Number.isFinite(n) && n >= 0 ? n : 'invalid'
}
