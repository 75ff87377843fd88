import type { ConvertedResponse, RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { isRecord, parseJson } from '../core/json.js'
import { GEMINI_API_VERSION, geminiModelName } from './api.js'
import { geminiUsage, readGeminiTokens } from './response.js'

/** Whether `req` is a Gemini client's embedding request (`:embedContent` or `:batchEmbedContents`). */
export function isGeminiEmbed (req: Pick<RelayRequest, 'endpoint' | 'format'>): boolean {
  return req.format === 'gemini' && (req.endpoint === 'embed_content' || req.endpoint === 'batch_embed_contents')
}

/** The path of an embedding request: `:embedContent`, or `:batchEmbedContents` for a batch. */
export function geminiEmbedPath (model: string, batch: boolean): string {
  return `/${GEMINI_API_VERSION}/models/${encodeURIComponent(geminiModelName(model))}${batch ? ':batchEmbedContents' : ':embedContent'}`
}

/**
 * A Gemini client's embedding body as sent: unchanged, except that a batch's requests name the
 * channel's model (`models/{model}`), as Google wants each request's model to be the URL's.
 */
export function geminiEmbedBody (req: RelayRequest): Record<string, unknown> {
  if (req.body === undefined) throw new ProviderError(PROVIDER_ERROR_CODES.noBody, 'an embedContent request needs a JSON body')
  const out: Record<string, unknown> = { ...req.body }
  if (req.endpoint === 'batch_embed_contents' && Array.isArray(out.requests)) {
    const model = `models/${geminiModelName(req.model)}`
    out.requests = out.requests.map((inner: unknown) => (isRecord(inner) ? { ...inner, model } : inner))
  }
  return out
}

/**
 * A Gemini embedding answer, forwarded unchanged. Google's embedContent answers carry no token
 * counts, so usage is undefined (the gateway counts the input) unless a `usageMetadata` came.
 */
export function convertGeminiEmbed (_req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const converted: ConvertedResponse = { status, contentType: contentType || 'application/json', body }
  const json = parseJson(body.toString('utf8'))
  const usage = isRecord(json) ? geminiUsage(readGeminiTokens(json.usageMetadata)) : undefined
  if (usage !== undefined) converted.usage = usage
  return converted
}
