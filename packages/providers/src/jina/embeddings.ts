import type { ConvertedResponse, RelayRequest } from '../core/adaptor.js'
import { isRecord, list, parseJson } from '../core/json.js'
import { requestPayload } from '../openai-compatible/api.js'
import type { Payload } from '../openai-compatible/types.js'
import { readUsage } from '../openai-compatible/usage.js'
import { base64Embeddings } from '../core/openai-shapes.js'

/** Whether the client asked for OpenAI's base64 encoding of the vectors. */
function wantsBase64 (req: RelayRequest): boolean {
  return req.body?.encoding_format === 'base64'
}

/**
 * Jina's embeddings request: the client's body with `model` replaced and unknown fields (task,
 * dimensions, late_chunking, embedding_type, normalized, truncate) untouched; a single input
 * becomes a list, and OpenAI's `encoding_format` is dropped (Jina names it `embedding_type`:
 * base64 is made here from the floats, so the bytes are exactly OpenAI's).
 */
export function jinaEmbeddingsBody (req: RelayRequest): Payload {
  return requestPayload(req, (body) => {
    delete body.encoding_format
    if (typeof body.input === 'string') body.input = [body.input]
  })
}

/**
 * An embeddings answer in OpenAI's shape (Jina, Workers AI): forwarded unchanged unless the
 * client asked for base64 vectors and the upstream sent floats (it ignores `encoding_format`),
 * which are then encoded as OpenAI does; usage from `usage` (prompt_tokens, else total_tokens).
 */
export function convertFloatEmbeddings (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const converted: ConvertedResponse = { status, contentType: contentType || 'application/json', body }
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json)) return converted
  const usage = readUsage(json.usage)
  if (usage !== undefined) converted.usage = usage
  const data = list(json.data)
  // A client that chose Jina's own embedding_type gets Jina's encoding.
  if (wantsBase64(req) && req.body?.embedding_type === undefined && data.some((item) => isRecord(item) && Array.isArray(item.embedding))) {
    converted.body = JSON.stringify({ ...json, data: base64Embeddings(data) })
    converted.contentType = 'application/json'
  }
  return converted
}
