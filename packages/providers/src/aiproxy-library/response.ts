import type { ConvertedResponse, RelayRequest } from '../core/adaptor.js'
import { isRecord, list, parseJson, str, type JsonRecord } from '../core/json.js'
import { openAIErrorBody } from '../openai-compatible/errors.js'
import { chatCompletion } from '../core/openai-shapes.js'

/** A library answer that reports a failure: `success: false`, or a non-zero `errCode`. */
export function libraryError (json: JsonRecord): { code: string, message: string } | undefined {
  const raw = json.errCode ?? json.errorCode
  const code = typeof raw === 'number' ? String(raw) : str(raw) ?? ''
  const failedCode = code !== '' && code !== '0' && code !== '200'
  if (json.success !== false && !failedCode) return undefined
  const message = str(json.errMsg) ?? str(json.message) ?? str(json.msg) ?? 'the AIProxy library failed'
  return { code: code === '' ? 'library_error' : code, message }
}

/**
 * The documents an answer drew on, as numbered markdown links after the answer
 * (`References:` then `[1] [title](url)` lines); '' when there are none.
 */
export function referencesText (documents: unknown): string {
  const lines: string[] = []
  for (const document of list(documents)) {
    if (!isRecord(document)) continue
    const title = str(document.title)?.trim() ?? ''
    const url = str(document.url)?.trim() ?? ''
    if (title === '' && url === '') continue
    const n = lines.length + 1
    lines.push(url === '' ? `[${n}] ${title}` : `[${n}] [${title === '' ? url : title}](${url})`)
  }
  return lines.length === 0 ? '' : `\n\nReferences:\n${lines.join('\n')}`
}

/**
 * A non-streamed library answer (`{success, answer, documents}`) as an OpenAI chat completion:
 * the answer with its documents appended as references. AIProxy reports no usage, so the
 * gateway counts the answer (the references it lists are not generated text and are not
 * counted). A failure inside a 2xx answer goes to the client in OpenAI's error envelope; a body
 * of another shape is forwarded unchanged.
 */
export function convertLibraryResponse (req: RelayRequest, status: number, contentType: string, body: Buffer): ConvertedResponse {
  const json = parseJson(body.toString('utf8'))
  if (!isRecord(json)) return { status, contentType: contentType || 'application/json', body }
  const error = libraryError(json)
  if (error !== undefined) return { status: 502, contentType: 'application/json', body: openAIErrorBody(error.message, 'upstream_error', error.code) }
  const answer = str(json.answer)
  if (answer === undefined) return { status, contentType: contentType || 'application/json', body }
  return {
    status: 200,
    contentType: 'application/json',
    body: chatCompletion({ id: 'chatcmpl-aiproxy', model: req.model, content: answer + referencesText(json.documents), finishReason: 'stop' }),
    text: answer
  }
}
