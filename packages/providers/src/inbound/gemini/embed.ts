import { isRecord, list, num } from '../../core/json.js'

/** The text of one Gemini Content to embed: its text parts, joined by a newline. */
function embedText (content: unknown): string {
  if (typeof content === 'string') return content
  const texts: string[] = []
  for (const part of list(isRecord(content) ? content.parts : content)) {
    if (isRecord(part) && typeof part.text === 'string') texts.push(part.text)
  }
  return texts.join('\n')
}

/**
 * Converts a Gemini embedding request to an OpenAI embeddings request (`POST /v1/embeddings`)
 * for channels without Gemini's API: `:embedContent`'s `content` (its text parts, joined by a
 * newline) becomes a one-element `input`; `:batchEmbedContents`' `requests` become one input
 * each, in order. `outputDimensionality` (of the request, or of a batch's first request)
 * becomes `dimensions`; `taskType` and `title` have no OpenAI equivalent and are dropped.
 */
export function geminiEmbedToOpenAIRequest (body: Readonly<Record<string, unknown>>, model: string, batch: boolean): Record<string, unknown> {
  const requests = batch ? list(body.requests).filter(isRecord) : [body]
  const out: Record<string, unknown> = { model, input: requests.map((request) => embedText(request.content)) }
  const dimensions = num(requests[0]?.outputDimensionality)
  if (dimensions !== undefined) out.dimensions = dimensions
  return out
}

/**
 * Converts an OpenAI embeddings answer to Gemini's: `{embedding: {values}}` for `:embedContent`
 * (the first embedding), `{embeddings: [{values}, ...]}` for `:batchEmbedContents` (in the
 * order of the inputs, by each item's `index`). Embeddings not given as number lists are left out.
 */
export function openAIEmbeddingsToGemini (answer: Readonly<Record<string, unknown>>, batch: boolean): Record<string, unknown> {
  const data = list(answer.data).filter(isRecord)
  const ordered = data.every((item) => num(item.index) !== undefined)
    ? [...data].sort((a, b) => (num(a.index) ?? 0) - (num(b.index) ?? 0))
    : data
  const embeddings = ordered
    .map((item) => item.embedding)
    .filter((values): values is number[] => Array.isArray(values) && values.every((v) => typeof v === 'number'))
    .map((values) => ({ values }))
  if (batch) return { embeddings }
  return { embedding: embeddings[0] ?? { values: [] } }
}

