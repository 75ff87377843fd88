import { RelayError } from './errors.js'

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
  badBoundary: { en: 'The multipart/form-data boundary must be 1 to {max} characters', zh: 'multipart/form-data 的 boundary 长度必须为 1 到 {max} 个字符' }
} as const

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
