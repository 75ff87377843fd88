import { randomUUID } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { listen } from './proxies.js'
import type { Teardown } from './resources.js'

/** One request a fake upstream received, as it arrived. */
export interface RecordedRequest {
  method: string
  /** The path without the query string. */
  path: string
  query: URLSearchParams
  headers: IncomingHttpHeaders
  body: Buffer
}

/** A scripted refusal: the HTTP status and the JSON body to answer with (the fake's default error body when absent). */
export interface ScriptedFailure {
  status: number
  body?: unknown
}

/**
 * Starts an HTTP server on 127.0.0.1 that reads each request's whole body, records it and hands
 * it to `handle`; closed (open connections cut) at teardown. Returns its base URL.
 */
export async function serveFake (t: Teardown, handle: (req: RecordedRequest, res: ServerResponse) => void | Promise<void>, record: (req: RecordedRequest) => void): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake')
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks) }
      record(recorded)
      Promise.resolve(handle(recorded, res)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: String(err) }))
      })
    })
  })
  return `http://127.0.0.1:${await listen(t, server)}`
}

/** Answers `status` with `body` as JSON. */
export function sendJson (res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

/** The JSON object of a body; {} when it is not one. */
export function jsonObject (body: Buffer): Record<string, unknown> {
  try {
    const v = JSON.parse(body.toString('utf8')) as unknown
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

/** One part of a multipart/form-data body. */
export interface FormPart {
  name: string
  filename?: string
  contentType?: string
  data: Buffer
}

/** The parts of a multipart/form-data body; [] when `contentType` has no boundary. */
export function formParts (contentType: string, body: Buffer): FormPart[] {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType)
  const boundary = m?.[1] ?? m?.[2]
  if (boundary === undefined) return []
  const delimiter = Buffer.from(`--${boundary}`)
  const parts: FormPart[] = []
  let start = body.indexOf(delimiter)
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length)
    if (next < 0) break
    // Between the delimiter line's CRLF and the CRLF before the next delimiter.
    const part = body.subarray(start + delimiter.length + 2, next - 2)
    const headerEnd = part.indexOf('\r\n\r\n')
    if (headerEnd >= 0) {
      const headers = part.subarray(0, headerEnd).toString('latin1')
      const name = /name="([^"]*)"/i.exec(headers)?.[1]
      const filename = /filename="([^"]*)"/i.exec(headers)?.[1]
      const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]
      if (name !== undefined) {
        parts.push({ name, data: part.subarray(headerEnd + 4), ...(filename === undefined ? {} : { filename }), ...(type === undefined ? {} : { contentType: type.trim() }) })
      }
    }
    start = next
  }
  return parts
}

/** A fresh unguessable id: `prefix` and 32 hex digits. */
export function randomId (prefix: string): string {
  return `${prefix}${randomUUID().replaceAll('-', '')}`
}
