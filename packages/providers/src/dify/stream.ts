import type { RelayRequest, StreamConverter, Usage } from '../adaptor.js'
import { sseReader } from '../claude/index.js'
import { parseJson } from '../json.js'
import { textKeeper } from '../text-keeper.js'
import type { DifyOptions } from './api.js'
import { chunkWriter } from './chunks.js'
import { difyEvents } from './events.js'

/**
 * Converts a Dify app's stream (server-sent events whose JSON names its `event`) into OpenAI
 * chat.completion.chunk events as they come (see difyEvents): the role chunk first, content
 * and (with `thoughts`) `reasoning_content` deltas, then the finish reason, a usage chunk when
 * Dify reported usage, and `data: [DONE]` on `message_end` (`workflow_finished` for workflow
 * apps). An `error` event before any text is dropped, so the relay can try another channel;
 * after text it goes to the client as an OpenAI error chunk, and the stream does not finish.
 * Keeps only the text not yet taken.
 */
export function createDifyStream (req: RelayRequest, options: DifyOptions): StreamConverter {
  const writer = chunkWriter(req.model, 'dify')
  const text = textKeeper()
  let usage: Usage | undefined
  let done = false
  const handle = difyEvents(options, {
    name: writer.name,
    content: (value) => {
      writer.content(value)
      text.keep(value)
    },
    reasoning: (value) => {
      writer.reasoning(value)
      text.keep(value)
    },
    finish: (reason, reported) => {
      writer.finish(reason, reported)
      usage = reported
      done = true
    },
    error: (_status, code, message) => { writer.error(message, code) }
  })
  const reader = sseReader((event) => handle(parseJson(event.data.toString('utf8'))))
  return {
    push: (bytes) => {
      reader.push(bytes)
      return writer.flush()
    },
    end: () => {
      reader.end()
      return writer.flush()
    },
    usage: () => usage,
    takeText: () => text.take(),
    untakenBytes: () => text.bytes(),
    finished: () => done
  }
}
