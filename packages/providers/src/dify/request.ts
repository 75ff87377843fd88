import type { ChannelConfig, RelayRequest } from '../core/adaptor.js'
import { contentText, isRecord, list, str, type JsonRecord } from '../core/json.js'
import { upstreamStreams, type DifyOptions } from './api.js'

const ROLE_LABELS: Readonly<Record<string, string>> = {
  system: 'System',
  developer: 'System',
  user: 'User',
  assistant: 'Assistant',
  tool: 'Tool',
  function: 'Tool'
}

/** The text of the last user message. */
function lastUserText (messages: readonly unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (isRecord(message) && message.role === 'user') return contentText(message.content)
  }
  return ''
}

/**
 * One question for upstreams that take a single query and keep no history of ours (Dify apps,
 * AIProxy's library): the only user message as it is, else the whole conversation as a
 * transcript (`System: …`, `User: …`, `Assistant: …` paragraphs), the last user turn last, so
 * the app sees the system prompt and the earlier turns.
 */
export function foldedQuery (messages: readonly unknown[]): string {
  const turns: Array<{ role: string, text: string }> = []
  for (const message of messages) {
    if (!isRecord(message)) continue
    const text = contentText(message.content)
    if (text === '') continue
    turns.push({ role: str(message.role) ?? 'user', text })
  }
  const only = turns[0]
  if (turns.length === 1 && only !== undefined && only.role === 'user') return only.text
  return turns.map((turn) => `${ROLE_LABELS[turn.role] ?? turn.role}: ${turn.text}`).join('\n\n')
}

/** http(s) image links of the user messages, as Dify's remote-URL files (data: URLs would need an upload first). */
function imageFiles (messages: readonly unknown[]): JsonRecord[] {
  const files: JsonRecord[] = []
  for (const message of messages) {
    if (!isRecord(message) || message.role !== 'user') continue
    for (const part of list(message.content)) {
      if (!isRecord(part) || part.type !== 'image_url') continue
      const image = part.image_url
      const url = isRecord(image) ? str(image.url) : str(image)
      if (url !== undefined && /^https?:\/\//i.test(url)) files.push({ type: 'image', transfer_method: 'remote_url', url })
    }
  }
  return files
}

/** The Dify end user: the client's OpenAI `user`, else one fixed user per channel. */
function difyUser (channel: ChannelConfig, body: JsonRecord): string {
  const user = str(body.user)
  return user !== undefined && user.trim() !== '' ? user : `modelgate-channel-${channel.id}`
}

/**
 * The Dify request of an OpenAI chat request. Chat and agent apps get the conversation as
 * `query` (folded into a transcript, or only the last user message when the client continues a
 * Dify conversation by its `conversation_id`); completion and workflow apps get it as the input
 * variable `query`. A client's `inputs` object is passed on (its `query` wins), images given by
 * http(s) links become remote-URL files, the end user is the client's `user` or one per channel,
 * and chat apps are asked not to name the conversation (an extra model call Dify would bill).
 */
export function difyBody (channel: ChannelConfig, req: RelayRequest, options: DifyOptions): JsonRecord {
  const body = req.body ?? {}
  const messages = list(body.messages)
  const conversation = str(body.conversation_id) ?? ''
  const query = conversation === '' ? foldedQuery(messages) : lastUserText(messages)
  const inputs: Record<string, unknown> = isRecord(body.inputs) ? { ...body.inputs } : {}
  const out: Record<string, unknown> = {}
  if (options.mode === 'chat' || options.mode === 'agent') {
    out.inputs = inputs
    out.query = query
    out.conversation_id = conversation
    out.auto_generate_name = false
  } else {
    inputs.query ??= query
    out.inputs = inputs
  }
  out.response_mode = upstreamStreams(options, req) ? 'streaming' : 'blocking'
  out.user = difyUser(channel, body)
  const files = imageFiles(messages)
  if (files.length > 0) out.files = files
  return out
}
