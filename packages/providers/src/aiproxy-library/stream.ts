import type { RelayRequest, StreamConverter } from '../adaptor.js'
import { sseReader } from '../claude/index.js'
import { chunkWriter } from '../dify/index.js'
import { isRecord, parseJson, str } from '../json.js'
import { textKeeper } from '../text-keeper.js'
import { libraryError, referencesText } from './response.js'

/**
 * Converts AIProxy's streamed library answer (server-sent events of `{content, finish}`, the
 * documents in any event) into OpenAI chat chunks: content deltas, then on `finish: true` (or a
 * `[DONE]` line) the documents as references, the finish reason and `data: [DONE]`. There is no
 * usage (the gateway counts the answer, not the references). A failure before any text is
 * dropped so the relay can try another channel; after text it becomes an OpenAI error chunk.
 */
export function createLibraryStream (req: RelayRequest): StreamConverter {
  const writer = chunkWriter(req.model, 'aiproxy')
  const text = textKeeper()
  let documents: unknown
  let done = false
  let failed = false

  function finish (): void {
    writer.content(referencesText(documents))
    writer.finish('stop', undefined)
    done = true
  }

  const reader = sseReader((event) => {
    if (done || failed) return
    const data = event.data.toString('utf8')
    if (data.trim() === '[DONE]') {
      finish()
      return
    }
    const json = parseJson(data)
    if (!isRecord(json)) return
    const error = libraryError(json)
    if (error !== undefined) {
      writer.error(error.message, error.code)
      failed = true
      return
    }
    if (Array.isArray(json.documents)) documents = json.documents
    const content = str(json.content) ?? ''
    writer.content(content)
    text.keep(content)
    if (json.finish === true) finish()
  })

  return {
    push: (bytes) => {
      reader.push(bytes)
      return writer.flush()
    },
    end: () => {
      reader.end()
      return writer.flush()
    },
    usage: () => undefined,
    takeText: () => text.take(),
    untakenBytes: () => text.bytes(),
    finished: () => done
  }
}
