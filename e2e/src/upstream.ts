import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface FakeOpenAIOptions {
  /** What GET /v1/models lists. */
  models?: string[]
  /** The token counts a chat reports for `model` (default 9 prompt, 3 completion). */
  usage?: (model: string) => { prompt_tokens: number, completion_tokens: number }
  /** The assistant's answer to a chat that does not stream. */
  reply?: string
  /** Milliseconds a chat that does not stream takes to answer. */
  delayMs?: number
  /** Keys (without `Bearer `) answered 401 with OpenAI's invalid-key error. */
  deadKeys?: string[]
}

export interface FakeOpenAI {
  url: string
  /** Chat completions answered so far. */
  calls: number
  /** The Authorization header of every request, in order. */
  keys: string[]
  /** Every chat completion request: its headers and parsed body, in order. */
  chats: Array<{ headers: Record<string, string | string[] | undefined>, body: Record<string, unknown> }>
}

const DEFAULT_USAGE = { prompt_tokens: 9, completion_tokens: 3 }

/** A real OpenAI-protocol server on 127.0.0.1: chat completions (JSON or SSE, with usage) and the model list. */
export async function fakeOpenAI (t: Test, options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const { models = ['gpt-4o-mini'], usage = () => DEFAULT_USAGE, reply = 'Hello there!', delayMs = 0, deadKeys = [] } = options
  const state: FakeOpenAI = { url: '', calls: 0, keys: [], chats: [] }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      state.keys.push(req.headers.authorization ?? '')
      const path = (req.url ?? '').split('?')[0]
      if (req.method === 'GET' && path === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'test' })) }))
        return
      }
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { model?: string, stream?: boolean }
        state.chats.push({ headers: req.headers, body })
        if (deadKeys.includes((req.headers.authorization ?? '').replace(/^Bearer /, ''))) {
          res.writeHead(401, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }))
          return
        }
        state.calls++
        const model = body.model ?? 'gpt-4o-mini'
        const u = usage(model)
        const counts = { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.prompt_tokens + u.completion_tokens }
        if (body.stream === true) {
          const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
            `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices, ...extra })}\n\n`
          res.writeHead(200, { 'content-type': 'text/event-stream' })
          for (const word of ['Hello', ' there', '!']) res.write(chunk([{ index: 0, delta: { content: word }, finish_reason: null }]))
          res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]))
          res.write(chunk([], { usage: counts }))
          res.end('data: [DONE]\n\n')
          return
        }
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }], usage: counts }))
        }, delayMs)
        return
      }
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error', code: null } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => { resolve() })
  }))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}
