/** Tokens of a text, by some counter. */
export type TokenCounter = (text: string) => number

/**
 * An estimate for reservations, a few microseconds whatever the prompt: o200k takes 4-5 UTF-8
 * bytes a token in English and Chinese prose, about 2.6 in code and JSON. The bill never uses
 * it: settlement charges the upstream's usage, or an exact count, and corrects the reservation.
 */
export const approxCounter: TokenCounter = (text) => (text === '' ? 0 : Math.ceil(Buffer.byteLength(text) / 4))

let tokenizer: Promise<TokenCounter> | undefined

/**
 * The exact counter (o200k_base, the tokenizer of current OpenAI models), loaded on first use:
 * its tables take about 45 MB, and most upstreams report usage, so a gateway may never need it.
 */
export async function exactCounter (): Promise<TokenCounter> {
  // Billing must never fail on the counter: were the module unloadable, the estimate serves.
  tokenizer ??= import('gpt-tokenizer').then(({ countTokens }) => (text: string) => (text === '' ? 0 : countTokens(text)), () => approxCounter)
  return await tokenizer
}


// Per-message framing of the chat format, and a flat estimate for each image part.
const PER_MESSAGE = 3
const PER_REPLY = 3
const PER_IMAGE = 85

function textOfContent (content: unknown): { text: string, images: number } {
  if (typeof content === 'string') return { text: content, images: 0 }
  if (!Array.isArray(content)) return { text: '', images: 0 }
  let text = ''
  let images = 0
  for (const part of content) {
    if (typeof part !== 'object' || part === null) continue
    const p = part as Record<string, unknown>
    if (typeof p['text'] === 'string') text += p['text']
    else if (p['type'] === 'image_url' || p['type'] === 'input_image' || p['type'] === 'image') images++
  }
  return { text, images }
}

/**
 * Prompt tokens of an OpenAI-format request body, counted with a real tokenizer: chat messages
 * (text parts, names, tool calls), completion prompts, embedding inputs, responses input,
 * moderation input, rerank query and documents, image prompts, speech input.
 */
export function promptTokensOf (body: Readonly<Record<string, unknown>>, tokensOf: TokenCounter): number {
  let total = 0
  const messages = body['messages']
  if (Array.isArray(messages)) {
    for (const m of messages) {
      if (typeof m !== 'object' || m === null) continue
      const msg = m as Record<string, unknown>
      const { text, images } = textOfContent(msg['content'])
      total += PER_MESSAGE + tokensOf(text) + images * PER_IMAGE
      if (typeof msg['name'] === 'string') total += tokensOf(msg['name'])
      if (msg['tool_calls'] !== undefined) total += tokensOf(JSON.stringify(msg['tool_calls']))
    }
    total += PER_REPLY
    if (body['tools'] !== undefined) total += tokensOf(JSON.stringify(body['tools']))
  }
  for (const field of ['prompt', 'input', 'query', 'instructions']) {
    const v = body[field]
    if (typeof v === 'string') total += tokensOf(v)
    else if (Array.isArray(v)) {
      for (const item of v) {
        if (typeof item === 'string') total += tokensOf(item)
        else if (typeof item === 'object' && item !== null) {
          const { text, images } = textOfContent((item as Record<string, unknown>)['content'] ?? [item])
          total += tokensOf(text) + images * PER_IMAGE
        }
      }
    }
  }
  const docs = body['documents']
  if (Array.isArray(docs)) for (const d of docs) if (typeof d === 'string') total += tokensOf(d)
  return total
}

/** The completion budget the client asked for, if any. */
export function maxTokensOf (body: Readonly<Record<string, unknown>>): number {
  for (const f of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const v = body[f]
    if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v
  }
  return 0
}

/** All text of the prompt, for the sensitive-word check. */
export function promptText (body: Readonly<Record<string, unknown>>): string {
  const parts: string[] = []
  const messages = body['messages']
  if (Array.isArray(messages)) {
    for (const m of messages) if (typeof m === 'object' && m !== null) parts.push(textOfContent((m as Record<string, unknown>)['content']).text)
  }
  for (const f of ['prompt', 'input', 'instructions']) {
    const v = body[f]
    if (typeof v === 'string') parts.push(v)
    else if (Array.isArray(v)) for (const i of v) if (typeof i === 'string') parts.push(i)
  }
  return parts.join('\n')
}
