import { isUtf8 } from 'node:buffer'
import { RelayError, RM } from './errors.js'

/**
 * Deepest nesting of arrays and objects a relay JSON body may have (the body itself is level 1).
 * Real requests stay far below (a chat body is about 5 levels, a tool's JSON schema a few dozen);
 * anything deeper only serves to overflow the stack of code that walks the body recursively.
 */
export const MAX_JSON_DEPTH = 128

/** RFC 2046 §5.1.1: a multipart boundary is 1 to 70 characters. */
export const MAX_BOUNDARY_LENGTH = 70

const M = {
  tooDeep: { en: 'The request body is nested more than {max} levels deep', zh: '请求体的嵌套层级超过 {max} 层' },
  forbiddenKey: { en: 'The request body contains the forbidden key "{key}"', zh: '请求体包含不允许的键 "{key}"' },
  badBoundary: { en: 'The multipart/form-data boundary must be 1 to {max} characters', zh: 'multipart/form-data 的 boundary 长度必须为 1 到 {max} 个字符' },
  invalidUtf8: { en: 'The request body is not valid UTF-8', zh: '请求体不是合法的 UTF-8 编码' },
  duplicateKey: { en: 'The request body has the key "{key}" more than once', zh: '请求体中的键 "{key}" 出现了不止一次' }
} as const

/**
 * A relay JSON body from its bytes: valid UTF-8 (checked on the bytes: decoding would turn a bad
 * byte into U+FFFD silently, and the text sent upstream would not be the client's), JSON, an
 * empty body as `{}`, then {@link checkJsonBody} and {@link checkRoutingKeys}. Refusals are 400
 * RelayErrors, answered in the caller's protocol before any reservation.
 */
export function parseJsonBody (data: Buffer): unknown {
  if (!isUtf8(data)) throw new RelayError(400, 'invalid_request_error', 'invalid_utf8', M.invalidUtf8)
  const text = data.toString('utf8')
  let body: unknown
  try {
    body = text.trim() === '' ? {} : JSON.parse(text)
  } catch (err) {
    throw new RelayError(400, 'invalid_request_error', 'invalid_json', RM.invalidJson, { detail: (err as Error).message })
  }
  checkJsonBody(body)
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) checkRoutingKeys(text, body as Record<string, unknown>)
  return body
}

/**
 * The top-level keys that route or bill a request. JSON.parse keeps the last of duplicate keys,
 * and other parsers (an upstream's, a proxy's) may keep the first: a body naming two models or
 * two max_tokens could be routed or billed on one value and served on the other.
 */
export const ROUTING_KEYS: readonly string[] = ['model', 'stream', 'n', 'max_tokens', 'max_completion_tokens']

/**
 * Refuses a body whose top level has one of {@link ROUTING_KEYS} more than once (other keys:
 * the last wins, as in JSON.parse). `text` is the JSON the parsed `body` came from.
 *
 * The hot path does no second parse: a key can only be duplicated at the top level if the parsed
 * body has it, and a duplicate is written either literally, so `"key"` followed by `:` occurs at
 * least twice in the text (one pass of {@link KEY_USE} for the five keys, which inside strings
 * never matches: their quotes are escaped), or with \u escapes of its letters (`"m\u006fdel"`),
 * which real bodies hardly ever use for ASCII letters. Only then does {@link duplicateTopLevelKey}
 * walk the top level to be sure (a tool schema with a "model" property is not a duplicate).
 * About 15 µs for a 100 KB body (its JSON.parse: about 300 µs).
 */
export function checkRoutingKeys (text: string, body: Readonly<Record<string, unknown>>): void {
  if (!escapesKeyLetters(text) && !usedTwice(text, body)) return
  const key = duplicateTopLevelKey(text, ROUTING_KEYS)
  if (key !== undefined) throw new RelayError(400, 'invalid_request_error', 'duplicate_key', M.duplicateKey, { key })
}

/** A routing key written as a key (followed by a colon), anywhere in the text (the keys are plain [a-z_]). */
const KEY_USE = new RegExp(`"(${ROUTING_KEYS.join('|')})"[ \\t\\r\\n]*:`, 'g')

/** Whether a routing key the body has is written as a key twice or more, at any depth. */
function usedTwice (text: string, body: Readonly<Record<string, unknown>>): boolean {
  const seen = new Set<string>()
  KEY_USE.lastIndex = 0
  for (let m = KEY_USE.exec(text); m !== null; m = KEY_USE.exec(text)) {
    const key = m[1]!
    if (seen.has(key) && Object.hasOwn(body, key)) return true
    seen.add(key)
  }
  return false
}

/** Whether `text` has a \u escape of `_` or a lower-case letter (what a routing key is made of). */
function escapesKeyLetters (text: string): boolean {
  for (let at = text.indexOf('\\u00'); at !== -1; at = text.indexOf('\\u00', at + 4)) {
    const high = text.charCodeAt(at + 4)
    const low = text.charCodeAt(at + 5) | 0x20
    const hex = (low >= 0x30 && low <= 0x39) || (low >= 0x61 && low <= 0x66)
    if (hex && (high === 0x36 || high === 0x37 || (high === 0x35 && low === 0x66))) return true
  }
  return false
}

/**
 * The first of `keys` found twice among the keys of the top-level object of `text`, which is
 * valid JSON. Strings are skipped with indexOf (not byte by byte), so the cost follows the
 * body's structure; a key written with escapes is decoded to compare.
 */
export function duplicateTopLevelKey (text: string, keys: readonly string[]): string | undefined {
  const seen = new Set<string>()
  let depth = 0
  // At depth 1, a string right after `{` or `,` is a key; after `:` it is a value.
  let keyNext = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const end = stringEnd(text, i)
      if (depth === 1 && keyNext) {
        const raw = text.slice(i + 1, end)
        const key = raw.includes('\\') ? JSON.parse(`"${raw}"`) as string : raw
        if (keys.includes(key)) {
          if (seen.has(key)) return key
          seen.add(key)
        }
        keyNext = false
      }
      i = end
    } else if (c === 0x7b || c === 0x5b) {
      depth++
      keyNext = depth === 1
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    } else if (c === 0x2c && depth === 1) {
      keyNext = true
    }
  }
  return undefined
}

/** The index of the quote that ends the string opening at `start` (a quote not escaped by a backslash). */
function stringEnd (text: string, start: number): number {
  let end = text.indexOf('"', start + 1)
  while (end !== -1) {
    let backslashes = 0
    for (let j = end - 1; text.charCodeAt(j) === 0x5c; j--) backslashes++
    if (backslashes % 2 === 0) return end
    end = text.indexOf('"', end + 1)
  }
  return text.length
}

/**
 * Refuses a parsed relay body that is nested deeper than {@link MAX_JSON_DEPTH}, or that carries a
 * `__proto__` key or a `constructor` object with a `prototype` key anywhere (what Fastify's
 * secure-json-parse refuses with protoAction/constructorAction 'error'); such keys are never
 * part of a provider's API and are refused before they reach code that copies objects. Only
 * keys are looked at: message text that mentions __proto__ is fine.
 *
 * An iterative walk (V8's JSON.parse is iterative too, so nothing here recurses): it visits each
 * array and object once, stops at the first problem, and skips strings and numbers without
 * reading them, so its cost follows the body's structure, not its size in bytes.
 */
export function checkJsonBody (body: unknown, maxDepth = MAX_JSON_DEPTH): void {
  if (typeof body !== 'object' || body === null) return
  // Containers still to visit and their depths, side by side.
  const nodes: object[] = [body]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop()!
    const depth = depths.pop()!
    if (depth > maxDepth) throw new RelayError(400, 'invalid_request_error', 'json_too_deep', M.tooDeep, { max: String(maxDepth) })
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i]
        if (typeof v === 'object' && v !== null) {
          nodes.push(v)
          depths.push(depth + 1)
        }
      }
      continue
    }
    const record = node as Record<string, unknown>
    for (const key in record) {
      if (key === '__proto__') throw new RelayError(400, 'invalid_request_error', 'forbidden_json_key', M.forbiddenKey, { key })
      const v = record[key]
      if (typeof v !== 'object' || v === null) continue
      if (key === 'constructor' && Object.hasOwn(v, 'prototype')) {
        throw new RelayError(400, 'invalid_request_error', 'forbidden_json_key', M.forbiddenKey, { key: 'constructor.prototype' })
      }
      nodes.push(v)
      depths.push(depth + 1)
    }
  }
}

/**
 * The boundary of a multipart/form-data content type, unquoted; refuses one longer than RFC
 * 2046 allows (a 10 000-character boundary only makes every search for it costlier) or empty.
 * Undefined when there is none (the body then has no field to find).
 */
export function multipartBoundary (contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(contentType)
  if (m === null) return undefined
  const boundary = m[1] ?? m[2] ?? ''
  if (boundary.length === 0 || boundary.length > MAX_BOUNDARY_LENGTH) {
    throw new RelayError(400, 'invalid_request_error', 'invalid_multipart_boundary', M.badBoundary, { max: String(MAX_BOUNDARY_LENGTH) })
  }
  return boundary
}
