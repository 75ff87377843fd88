import type { ChannelConfig, RelayRequest } from '../core/adaptor.js'

/** Dify Cloud's API, used when the channel has no base URL (self-hosted Dify serves the same paths). */
export const DIFY_BASE_URL = 'https://api.dify.ai'

/**
 * The kind of Dify app behind the channel's key: `chat` (chatbots and chatflows), `agent` (agent
 * apps, which stream only), `completion` (text generators) or `workflow`.
 */
type DifyAppMode = 'chat' | 'agent' | 'completion' | 'workflow'

/** What the channel's `other` says. */
export interface DifyOptions {
  mode: DifyAppMode
  /** Workflow node progress and agent tool calls as `reasoning_content`. */
  thoughts: boolean
}

const MODES: Readonly<Record<string, DifyAppMode>> = {
  chat: 'chat',
  chatbot: 'chat',
  chatflow: 'chat',
  'advanced-chat': 'chat',
  agent: 'agent',
  'agent-chat': 'agent',
  completion: 'completion',
  workflow: 'workflow'
}

/**
 * Reads the channel's `other`: words separated by commas, `+` or spaces, one of them the app
 * mode (chat by default), optionally `thoughts`. Unknown words are ignored.
 */
export function difyOptions (channel: ChannelConfig): DifyOptions {
  const options: DifyOptions = { mode: 'chat', thoughts: false }
  for (const word of channel.other.toLowerCase().split(/[\s,+;|]+/)) {
    const mode = MODES[word]
    if (mode !== undefined) options.mode = mode
    else if (word === 'thoughts' || word === 'thinking') options.thoughts = true
  }
  return options
}

/** The API path of each mode. */
const PATHS: Readonly<Record<DifyAppMode, string>> = {
  chat: '/v1/chat-messages',
  agent: '/v1/chat-messages',
  completion: '/v1/completion-messages',
  workflow: '/v1/workflows/run'
}

/** `${base}/v1/...` for the app mode; a base URL pasted with its `/v1` (as Dify shows it) is not doubled. */
export function difyUrl (base: string, mode: DifyAppMode): string {
  const path = PATHS[mode]
  return base.endsWith('/v1') ? base + path.slice('/v1'.length) : base + path
}

/** Whether the upstream is asked to stream: streamed requests, and every request to an agent app (which refuses blocking mode). */
export function upstreamStreams (options: DifyOptions, req: RelayRequest): boolean {
  return req.stream || options.mode === 'agent'
}
