/** Tokens of a text, by some counter. */
export type TokenCounter = (text: string) => number

// Weights of approxCounter, fitted against o200k_base on prose, code, JSON and Chinese.
const WORD_ONE_TOKEN = 7 // letters a word piece holds in one token
const WORD_EXTRA_LETTERS = 4 // letters a further token holds beyond those
const NON_ASCII_LETTER = 0.07 // accented Latin, Cyrillic, Greek...: shorter tokens
const CJK_CHAR = 0.775 // Han, kana, hangul: o200k packs about 1.3 of them a token
const PUNCT_FIRST = 0.9 // a punctuation run: common pairs (`",`, `);`, `=>`) are one token
const PUNCT_NEXT = 0.225
const PUNCT_REPEAT = 0.05 // `-----`, `=====`: long runs of one char are single tokens
const PUNCT_BEFORE_WORD = 0.5 // `.get`, `_name`, `"key`: often merged with the word
const SPACES = 1.2 // a run of 2+ blanks (indentation, alignment) besides the word's own space
const TAB_LAST = 1.5 // a run ending in a tab: the tab is not absorbed by the next word
const ASTRAL = 1.5 // emoji and other surrogate pairs

/** Letters of the o200k pre-tokenizer's words, as far as a code unit tells: ASCII, then U+00C0..U+1FFF. */
function isLetter (c: number): boolean {
  const l = c | 32
  return (l >= 97 && l <= 122) || (c >= 0xc0 && c < 0x2000 && c !== 0xd7 && c !== 0xf7)
}

function isCjk (c: number): boolean {
  return (c >= 0x3040 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff)
}

/**
 * An estimate of o200k_base tokens for reservations: one pass over the char codes, no tables,
 * 0.5-0.8 µs of CPU per 100 characters (1 MB in about 7 ms) on a busy 2-core box. It mirrors
 * o200k's pre-tokenizer: a word piece (split at camelCase humps, taking its leading space) is a
 * token, plus one per 4 letters beyond 7; digits go in threes; a CJK char is 0.775; a punctuation
 * run starts at 0.9 and absorbs the newlines right after it; other newlines are a token,
 * indentation another. Against gpt-tokenizer's countTokens it stays within 15% on English prose,
 * Chinese prose, mixed English/Chinese, TypeScript, JavaScript, Python and JSON (worst
 * 2,000-character chunks 0.85 to 1.12 of the exact count, each kind within 5% overall); it
 * undercounts random base64 by about 30%. The bill never uses it: settlement charges the
 * upstream's usage, or an exact count, and corrects the reservation.
 */
export const approxCounter: TokenCounter = (text) => {
  const n = text.length
  let tokens = 0
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (isLetter(c)) {
      let len = 0
      let nonAscii = 0
      let afterLower = false
      for (; i < n; i++, len++) {
        const d = text.charCodeAt(i)
        if (d >= 97 && d <= 122) afterLower = true
        else if (d >= 65 && d <= 90) { if (afterLower) break } else if (d >= 0xc0 && d < 0x2000 && d !== 0xd7 && d !== 0xf7) { nonAscii++; afterLower = true } else break
      }
      tokens += 1 + (len > WORD_ONE_TOKEN ? (len - WORD_ONE_TOKEN) / WORD_EXTRA_LETTERS : 0) + nonAscii * NON_ASCII_LETTER
    } else if (c >= 48 && c <= 57) {
      let len = 0
      for (; i < n; i++, len++) {
        const d = text.charCodeAt(i)
        if (d < 48 || d > 57) break
      }
      tokens += Math.ceil(len / 3)
    } else if (c === 32 || c === 9) {
      let len = 0
      for (; i < n; i++, len++) {
        const d = text.charCodeAt(i)
        if (d !== 32 && d !== 9) break
      }
      if (i === n) { tokens += 1; break } // blanks ending the text are a token of their own
      const next = text.charCodeAt(i)
      if (next === 10 || next === 13) continue // blanks ending a line join the newline
      if (len > 1) tokens += SPACES
      // A word or punctuation takes one leading space; digits and tabs do not.
      if (text.charCodeAt(i - 1) === 9) tokens += TAB_LAST
      else if (next >= 48 && next <= 57) tokens += 1
    } else if (c === 10 || c === 13) {
      // Newlines with blank lines between them are one token; the last line's indentation is not.
      let last = i
      for (; i < n; i++) {
        const d = text.charCodeAt(i)
        if (d === 10 || d === 13) last = i
        else if (d !== 32 && d !== 9) break
      }
      i = last + 1
      tokens += 1
    } else if (isCjk(c)) {
      tokens += CJK_CHAR
      i++
    } else if (c >= 0xd800 && c <= 0xdfff) {
      tokens += ASTRAL / 2
      i++
    } else {
      // Punctuation, symbols and control characters: every class above ends the run.
      let len = 0
      let repeats = 0
      let prev = -1
      for (; i < n; i++, len++) {
        const d = text.charCodeAt(i)
        if (d === 32 || d === 9 || d === 10 || d === 13 || isLetter(d) || (d >= 48 && d <= 57) || isCjk(d) || (d >= 0xd800 && d <= 0xdfff)) break
        if (d === prev) repeats++
        prev = d
      }
      const next = i < n ? text.charCodeAt(i) : 0
      if (len === 1 && ((next | 32) >= 97 && (next | 32) <= 122)) tokens += PUNCT_BEFORE_WORD
      else tokens += PUNCT_FIRST + (len - 1 - repeats) * PUNCT_NEXT + repeats * PUNCT_REPEAT
      while (i < n && (text.charCodeAt(i) === 10 || text.charCodeAt(i) === 13)) i++
    }
  }
  return Math.ceil(tokens)
}

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
  // `system` is Anthropic's system prompt (text or text blocks).
  for (const field of ['prompt', 'input', 'query', 'instructions', 'system']) {
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
