import i18n from '../../i18n'
import { storedUser } from '../../api/session'

export interface ChatTurn { role: 'system' | 'user' | 'assistant', content: string }

export interface ChatRequest {
  messages: ChatTurn[]
  model: string
  group: string
  temperature: number
  /** 0 means no limit (the field is then left out). */
  max_tokens: number
}

/** Why a playground request failed: an HTTP answer (`http`) or an error inside the stream (`stream`). */
export class PlaygroundError extends Error {
  readonly kind: 'http' | 'stream'
  readonly status: number
  /** The relay's error code (`model_not_priced`, ...), when it sent one. */
  readonly code: string | undefined

  constructor (message: string, kind: 'http' | 'stream', status: number, code?: string) {
    super(message)
    this.kind = kind
    this.status = status
    this.code = code
  }
}

function isRecord (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** The message of an error body: OpenAI's `{error: {message}}` or the console's `{message}`. */
function errorMessage (body: unknown): string | undefined {
  if (!isRecord(body)) return undefined
  const error = body['error']
  if (isRecord(error) && typeof error['message'] === 'string' && error['message'] !== '') return error['message']
  if (typeof error === 'string' && error !== '') return error
  if (typeof body['message'] === 'string' && body['message'] !== '') return body['message']
  return undefined
}

function httpError (status: number, text: string): PlaygroundError {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const server = errorMessage(body)
  const error = isRecord(body) ? body['error'] : undefined
  const code = isRecord(error) && typeof error['code'] === 'string' ? error['code'] : undefined
  if (server !== undefined) return new PlaygroundError(server, 'http', status, code)
  if (status === 429) return new PlaygroundError(i18n.t('error.tooManyRequests'), 'http', status)
  if (status >= 500) return new PlaygroundError(i18n.t('error.internal'), 'http', status)
  return new PlaygroundError(i18n.t('error.generic', { message: text.trim() !== '' ? text.trim().slice(0, 500) : String(status) }), 'http', status)
}

/** choices[0].delta.content (stream) or choices[0].message.content (a plain JSON answer). */
function contentOf (choice: unknown, field: 'delta' | 'message'): string {
  if (!isRecord(choice)) return ''
  const part = choice[field]
  return isRecord(part) && typeof part['content'] === 'string' ? part['content'] : ''
}

/**
 * Sends the conversation to the playground endpoint (the signed-in session, billed to the user)
 * and hands each piece of the streamed reply to `onDelta` as it arrives. Resolves when the stream
 * ends; rejects with a PlaygroundError, or the AbortError of `signal`.
 */
export async function streamChat (request: ChatRequest, signal: AbortSignal, onDelta: (text: string) => void): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' }
  const user = storedUser()
  if (user !== undefined) headers['new-api-user'] = String(user.id)
  const body: Record<string, unknown> = {
    messages: request.messages,
    stream: true,
    model: request.model,
    group: request.group,
    temperature: request.temperature
  }
  if (request.max_tokens > 0) body['max_tokens'] = request.max_tokens
  let res: Response
  try {
    res = await fetch('/pg/chat/completions', { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify(body), signal })
  } catch (err) {
    if (signal.aborted) throw err
    throw new PlaygroundError(i18n.t('error.network'), 'http', 0)
  }
  if (!res.ok) throw httpError(res.status, await res.text().catch(() => ''))

  // An upstream that ignores `stream` answers with one JSON object.
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new PlaygroundError(text, 'stream', res.status)
    }
    const failure = isRecord(parsed) && parsed['error'] !== undefined ? errorMessage(parsed) : undefined
    if (failure !== undefined) throw new PlaygroundError(failure, 'stream', res.status)
    const choices = isRecord(parsed) ? parsed['choices'] : undefined
    onDelta(Array.isArray(choices) ? contentOf(choices[0], 'message') : '')
    return
  }

  const reader = res.body?.getReader()
  if (reader === undefined) return
  const decoder = new TextDecoder()
  let buffer = ''
  let received = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      buffer += decoder.decode(value, { stream: !done })
      // Events are separated by a blank line; the last piece may be incomplete.
      const events = buffer.split(/\r?\n\r?\n/)
      buffer = done ? '' : events.pop() ?? ''
      for (const event of events) {
        const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n')
        if (data === '') continue
        if (data.trim() === '[DONE]') return
        let chunk: unknown
        try {
          chunk = JSON.parse(data)
        } catch {
          throw new PlaygroundError(data, 'stream', res.status)
        }
        if (isRecord(chunk) && chunk['error'] !== undefined) throw new PlaygroundError(JSON.stringify(chunk['error']), 'stream', res.status)
        const choices = isRecord(chunk) ? chunk['choices'] : undefined
        if (Array.isArray(choices) && choices.length === 0) {
          // The closing usage chunk has no choices; an opening one without choices (Azure's
          // prompt_filter_results) must not end the answer before it starts.
          if (received || (isRecord(chunk) && chunk['usage'] !== undefined)) return
          continue
        }
        const text = Array.isArray(choices) ? contentOf(choices[0], 'delta') : ''
        if (text !== '') {
          received = true
          onDelta(text)
        }
      }
      if (done) return
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}
