import type { RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { contentText, isRecord, list, num, str } from '../core/json.js'

/** Authors of PaLM chat messages: the user is `0`, the model `1` (any two names alternate). */
const USER = '0'
const MODEL = '1'

/**
 * An OpenAI chat request as a PaLM generateMessage request: system and developer messages as the
 * prompt's `context`; user and assistant turns as messages by authors `0` and `1` (their text;
 * consecutive turns of one author joined, since PaLM wants them to alternate; tool messages as
 * the user's text); temperature, top_p, top_k and n as candidateCount. PaLM has no length limit,
 * stop sequences nor tools on this method; the model is in the URL.
 */
export function palmMessageBody (req: RelayRequest): Record<string, unknown> {
  const body = req.body
  if (body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'a chat request needs a JSON body')
  const context: string[] = []
  const messages: Array<{ author: string, content: string }> = []
  for (const message of list(body.messages)) {
    if (!isRecord(message)) continue
    const role = str(message.role)
    const text = contentText(message.content)
    if (role === 'system' || role === 'developer') {
      if (text !== '') context.push(text)
      continue
    }
    if (text === '') continue
    const author = role === 'assistant' ? MODEL : USER
    const last = messages.at(-1)
    if (last !== undefined && last.author === author) last.content += `\n${text}`
    else messages.push({ author, content: text })
  }
  const prompt: Record<string, unknown> = { messages }
  if (context.length > 0) prompt.context = context.join('\n\n')
  const out: Record<string, unknown> = { prompt }
  const temperature = num(body.temperature)
  if (temperature !== undefined) out.temperature = Math.min(1, Math.max(0, temperature))
  const topP = num(body.top_p)
  if (topP !== undefined) out.topP = topP
  const topK = num(body.top_k)
  if (topK !== undefined) out.topK = topK
  const n = num(body.n)
  if (n !== undefined && n > 1) out.candidateCount = Math.min(8, Math.floor(n))
  return out
}
