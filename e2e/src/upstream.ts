import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

/** A real OpenAI-protocol server on 127.0.0.1: chat completions (JSON or SSE) and the model list. */
export async function fakeOpenAI (t: Test, models: string[] = ['gpt-4o-mini']): Promise<{ url: string, calls: number }> {
  const state = { url: '', calls: 0 }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]
      if (req.method === 'GET' && path === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'test' })) }))
        return
      }
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        state.calls++
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { model?: string, stream?: boolean }
        const model = body.model ?? 'gpt-4o-mini'
        if (body.stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream' })
          for (const word of ['Hello', ' there', '!']) {
            res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] })}\n\n`)
          }
          res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } })}\n\n`)
          res.end('data: [DONE]\n\n')
          return
        }
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there!' }, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } }))
        return
      }
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error', code: null } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}

/** A console API client over real HTTP through the gateway's address (cookie + New-Api-User). */
export async function apiClient (baseUrl: string, username: string, password: string) {
  const login = await fetch(`${baseUrl}/api/user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
  const body = await login.json() as { success: boolean, message: string, data: { id: number } }
  if (!body.success) throw new Error(`login as ${username} failed: ${body.message}`)
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0]!
  const headers = { cookie, 'new-api-user': String(body.data.id), 'content-type': 'application/json', 'accept-language': 'en' }
  const call = async <T = unknown>(method: string, path: string, payload?: unknown): Promise<{ success: boolean, message: string, data: T }> => {
    const res = await fetch(`${baseUrl}${path}`, { method, headers, ...(payload === undefined ? {} : { body: JSON.stringify(payload) }) })
    return await res.json() as { success: boolean, message: string, data: T }
  }
  return { id: body.data.id, call }
}
