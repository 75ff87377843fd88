import { at, isRecord, parseJson, type JsonRecord } from './json.js'

/**
 * Where the string that changes from one streamed event to the next sits: upstreams send a
 * stream's events with the same id, model and fields, the text alone changing.
 */
export interface TemplateSpec {
  /** The path to the string: object keys and array indexes; the last is a key. */
  path: ReadonlyArray<string | number>
  /** Whether a parsed event is worth a template (each costs a parse of its own). */
  learnable: (json: JsonRecord) => boolean
}

/** An event met before: its text before and after the string at the path, and its value with a sentinel there. */
interface Template {
  before: string
  after: string
  value: JsonRecord
}

/** The string put in a candidate template to prove where the string sits: never text an upstream sends. */
const SENTINEL = '\u0000modelgate\u0000'
const SENTINEL_LITERAL = JSON.stringify(SENTINEL).slice(1, -1)
/** Characters that need decoding or make a string body invalid: the quote, the backslash, controls. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const SPECIAL = /["\\\u0000-\u001f]/
/** Templates made without one being used: past this, every event of the stream is parsed in full. */
const TRIES = 3

/** `node` with `value` at `path` from step `i` on, copying the objects and arrays on the way only. */
function withValue (node: unknown, path: TemplateSpec['path'], i: number, value: string): unknown {
  if (i === path.length) return value
  const key = path[i]!
  if (Array.isArray(node)) {
    const copy = node.slice()
    copy[key as number] = withValue(node[key as number], path, i + 1, value)
    return copy
  }
  const record = node as JsonRecord
  // Assigned after the spread: a computed key in the literal costs twice as much.
  const copy: Record<string, unknown> = { ...record }
  copy[key] = withValue(record[key], path, i + 1, value)
  return copy
}

/**
 * The `[start, end)` of the string literal (quotes included) that is the value of the last
 * `"key":` in `payload`, or undefined.
 */
function literalOf (payload: string, key: string): [number, number] | undefined {
  const at = payload.lastIndexOf(key)
  if (at === -1) return undefined
  let start = at + key.length
  while (payload.charCodeAt(start) === 0x20) start++
  if (payload.charCodeAt(start) !== 0x22) return undefined
  for (let i = start + 1; i < payload.length; i++) {
    const c = payload.charCodeAt(i)
    if (c === 0x5c) i++
    else if (c === 0x22) return [start, i + 1]
  }
  return undefined
}

interface TemplatedJson {
  /** The payload parsed (undefined when it is not JSON), as JSON.parse gives it. */
  parse: (payload: string) => unknown
  /** Events made from a template, and templates tried (each costs a parse). */
  stats: () => { reused: number, learned: number }
}

/**
 * A JSON parser for the data of one stream's events, giving what JSON.parse gives. An event
 * that is the last template's text with another string at the spec's path is made from the
 * template without parsing it: most of a stream is such events, and parsing them was most of a
 * converted stream's cost. A template is made from a parsed event the spec finds learnable and
 * proved by parsing it once with a sentinel in the string's place (the sentinel must come back
 * at the path), so a key of the same name elsewhere (in a tool call's arguments, in a key of its
 * own) never passes for it.
 */
export function templatedJson (spec: TemplateSpec): TemplatedJson {
  const key = `"${String(spec.path[spec.path.length - 1])}":`
  let template: Template | undefined
  let tries = TRIES
  let reused = 0
  let learned = 0

  function fromTemplate (t: Template, payload: string): unknown {
    const end = payload.length - t.after.length
    // Compared as slices: V8's startsWith and endsWith are several times slower here.
    if (end < t.before.length || payload.slice(0, t.before.length) !== t.before || payload.slice(end) !== t.after) return undefined
    let text = payload.slice(t.before.length, end)
    if (SPECIAL.test(text)) {
      // Escapes are decoded by parsing the literal; an unescaped quote or a control fails it.
      const decoded = parseJson(`"${text}"`)
      if (typeof decoded !== 'string') return undefined
      text = decoded
    }
    return withValue(t.value, spec.path, 0, text)
  }

  function learn (payload: string, json: JsonRecord): void {
    if (tries === 0 || typeof at(json, ...spec.path) !== 'string' || !spec.learnable(json)) return
    tries--
    learned++
    template = undefined
    const span = literalOf(payload, key)
    if (span === undefined) return
    const before = payload.slice(0, span[0] + 1)
    const after = payload.slice(span[1] - 1)
    const proof = parseJson(before + SENTINEL_LITERAL + after)
    if (!isRecord(proof) || at(proof, ...spec.path) !== SENTINEL) return
    template = { before, after, value: proof }
  }

  return {
    parse: (payload) => {
      if (template !== undefined) {
        const made = fromTemplate(template, payload)
        if (made !== undefined) {
          tries = TRIES
          reused++
          return made
        }
      }
      const json = parseJson(payload)
      if (isRecord(json)) learn(payload, json)
      return json
    },
    stats: () => ({ reused, learned })
  }
}
