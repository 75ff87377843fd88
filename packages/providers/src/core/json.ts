// Readers for upstream JSON, which enters as `unknown` and is checked field by field.

export type JsonRecord = Readonly<Record<string, unknown>>

export function isRecord (value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The parsed value, or undefined when `text` is not JSON. */
export function parseJson (text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/**
 * The value at `path` inside nested objects (a number steps into an array), or undefined as soon
 * as a step is missing.
 */
export function at (value: unknown, ...path: ReadonlyArray<string | number>): unknown {
  let current = value
  for (const key of path) {
    if (typeof key === 'number' ? !Array.isArray(current) : !isRecord(current)) return undefined
    current = (current as Readonly<Record<string | number, unknown>>)[key]
  }
  return current
}

export function num (value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

export function str (value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

export function list (value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : []
}

/** The plain text of a chat message's `content`: a string, or the strings and `text` of its parts. */
export function contentText (content: unknown): string {
  if (typeof content === 'string') return content
  let text = ''
  for (const part of list(content)) {
    if (typeof part === 'string') text += part
    else if (isRecord(part)) text += str(part.text) ?? ''
  }
  return text
}
