/** What is wrong with the text of a JSON option, for a message (undefined when it is fine). */
export type JsonProblem =
  | { kind: 'syntax', detail: string }
  | { kind: 'shape', expected: 'object' | 'array' }
  | { kind: 'duplicate', name: string }
  | { kind: 'emptyName' }
  | { kind: 'value', name: string, expected: 'ratio' | 'string' }

export interface JsonRule {
  shape: 'object' | 'array'
  /** What every value of an object must be: a number >= 0, or a string. */
  values?: 'ratio' | 'string'
}

/** Pretty-printed JSON for editing; text that does not parse is returned as it is. */
export function pretty (text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

function sorted (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted)
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]))
  }
  return value
}

/**
 * A form of JSON text that is the same for equal values whatever the layout and key order, so that
 * re-formatting or re-ordering a map is not taken for a change. Text that does not parse is its own form.
 */
export function canonical (text: string): string {
  try {
    return JSON.stringify(sorted(JSON.parse(text)))
  } catch {
    return `\u0000${text}`
  }
}

/**
 * Names that appear more than once among the keys of the top-level object in `text` (which must
 * parse). JSON.parse keeps only the last of equal keys, so a group entered twice would silently
 * lose its first ratio: the text itself has to be read.
 */
export function duplicateKeys (text: string): string[] {
  const seen = new Set<string>()
  const dups = new Set<string>()
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      let k = j + 1
      while (k < text.length && /\s/.test(text[k]!)) k++
      if (depth === 1 && text[k] === ':') {
        const name = JSON.parse(text.slice(i, j + 1)) as string
        if (seen.has(name)) dups.add(name)
        seen.add(name)
      }
      i = j
    } else if (c === '{' || c === '[') {
      depth++
    } else if (c === '}' || c === ']') {
      depth--
    }
  }
  return [...dups]
}

/** Checks JSON option text against its rule (the same rules the server applies, plus unique names). */
export function checkJson (text: string, rule: JsonRule): JsonProblem | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    return { kind: 'syntax', detail: (err as Error).message }
  }
  if (rule.shape === 'array') return Array.isArray(value) ? undefined : { kind: 'shape', expected: 'array' }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'shape', expected: 'object' }
  const dup = duplicateKeys(text)[0]
  if (dup !== undefined) return { kind: 'duplicate', name: dup }
  for (const [name, v] of Object.entries(value)) {
    if (name.trim() === '') return { kind: 'emptyName' }
    if (rule.values === 'ratio' && !(typeof v === 'number' && Number.isFinite(v) && v >= 0)) return { kind: 'value', name, expected: 'ratio' }
    if (rule.values === 'string' && typeof v !== 'string') return { kind: 'value', name, expected: 'string' }
  }
  return undefined
}
