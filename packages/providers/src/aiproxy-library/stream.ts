import type { RelayRequest, StreamConverter } from '../core/adaptor.js'
import { sseReader } from '../claude/index.js'
import { isRecord, parseJson, str } from '../core/json.js'
import { chatChunkWriter } from '../core/openai-shapes.js'
import { streamConverter } from '../core/stream-converter.js'
import { libraryError, referencesText } from './response.js'

/**
 * Converts AIProxy's streamed library answer (server-sent events of `{content, finish}`, the
 * documents in any event) into OpenAI chat chunks: content deltas, then on `finish: true` (or a
 * `[DONE]` line) the documents as references, the finish reason and `data: [DONE]`. There is no
 * usage (the gateway counts the answer, not the references). A failure before any text is
 * dropped so the relay can try another channel; after text it becomes an OpenAI error chunk.
 */
export function createLibraryStream (req: RelayRequest): StreamConverter {
  const writer = chatChunkWriter(req.model, 'chatcmpl-aiproxy')
  let documents: unknown
  let failed = false

  function finish (): void {
    writer.content(referencesText(documents), false)
    writer.finish('stop', undefined)
  }

  const reader = sseReader((event) => {
    if (writer.finished() || failed) return
    const data = event.data.toString('utf8')
    if (data.trim() === '[DONE]') {
      finish()
      return
    }
    const json = parseJson(data)
    if (!isRecord(json)) return
    const error = libraryError(json)
    if (error !== undefined) {
      if (writer.started()) writer.error(error.message, error.code)
      failed = true
      return
    }
    if (Array.isArray(json.documents)) documents = json.documents
    writer.content(str(json.content) ?? '')
    if (json.finish === true) finish()
  })

  return streamConverter(reader, { flush: writer.flush, usage: () => undefined, finished: writer.finished, text: writer.text })
}
