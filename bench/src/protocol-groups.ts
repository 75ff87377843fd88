// Issue 17's targets: a conversion between protocols costs little over the OpenAI-to-OpenAI path.
// An OpenAI client to a Claude channel (chat converted to Anthropic's Messages API and its SSE
// events back to chunks), and an Anthropic client to an OpenAI channel (the other way round),
// each against the OpenAI client to an OpenAI channel measured in the same group.
import type { LoadJob, RequestSpec } from './load-types.js'
import { chatBody, chatRequest, check, type Ctx, measure, MODEL, round, type ScenarioResult, setAdded } from './measure.js'
import { createChannels, mockChannel, untilRouted } from './seed.js'

const CONNECTIONS = 50
const OPEN_LOOP_CONNECTIONS = 128
const RATE = 300

/** Priced models routed to the mock under upstream names it streams 5 ms apart (`*-paced`). */
const CLAUDE_MODEL = 'claude-sonnet-4-5-20250929'
const CLAUDE_PACED = 'claude-haiku-4-5-20251001'
const OPENAI_PACED = 'gpt-4o'

type Path = 'openai' | 'claude-channel' | 'anthropic-client'

const TITLES: Record<Path, string> = {
  openai: 'OpenAI client, OpenAI channel',
  'claude-channel': 'OpenAI client, Claude channel (converted)',
  'anthropic-client': 'Anthropic client, OpenAI channel (converted)'
}

/** A 20-chunk stream request of `path` through the gateway, paced 5 ms apart or not. */
function streamRequest (ctx: Ctx, path: Path, paced: boolean): RequestSpec {
  if (path === 'openai') return chatRequest(ctx, 'gateway', chatBody({ stream: true, ...(paced ? { mock_chunk_delay_ms: 5 } : {}) }))
  if (path === 'claude-channel') return chatRequest(ctx, 'gateway', chatBody({ stream: true, model: paced ? CLAUDE_PACED : CLAUDE_MODEL }))
  return {
    url: `${ctx.stack.gatewayUrl}/v1/messages`,
    headers: { 'content-type': 'application/json', 'x-api-key': ctx.seed.relayKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: paced ? OPENAI_PACED : MODEL, max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'Say hello in one word.' }] })
  }
}

/** The Claude channels (plain and paced) and the paced OpenAI channel, through the console API. */
async function seedChannels (ctx: Ctx): Promise<void> {
  const { stack, seed } = ctx
  await createChannels(seed.root, { ...mockChannel(stack, 'bench-claude', 'sk-ant-mock', [CLAUDE_MODEL]), type: 14 })
  await createChannels(seed.root, { ...mockChannel(stack, 'bench-claude-paced', 'sk-ant-mock', [CLAUDE_PACED]), type: 14, model_mapping: JSON.stringify({ [CLAUDE_PACED]: 'claude-bench-paced' }) })
  await createChannels(seed.root, { ...mockChannel(stack, 'bench-openai-paced', 'sk-mock', [OPENAI_PACED]), model_mapping: JSON.stringify({ [OPENAI_PACED]: 'gpt-4o-paced' }) })
  for (const model of [CLAUDE_MODEL, CLAUDE_PACED, OPENAI_PACED]) await untilRouted(stack, seed.relayKey, model, 30_000, 50)
}

const pct = (ratio: number) => `${Math.round(ratio * 100)}%`

/**
 * 20-chunk streams at 50 connections for each path, the OpenAI path before and after the two
 * conversions; then paced streams at 300 req/s open loop for the time to the first byte.
 */
export async function protocolsGroup (ctx: Ctx): Promise<void> {
  await seedChannels(ctx)
  const closed = async (path: Path, id: string): Promise<ScenarioResult> => {
    const job: LoadJob = { kind: 'connections', request: streamRequest(ctx, path, false), connections: CONNECTIONS, seconds: ctx.opts.duration }
    return (await measure(ctx, { id, group: 'protocols', title: `20-chunk stream, ${TITLES[path]}`, via: 'gateway', load: `${CONNECTIONS} connections`, job })).result
  }
  const before = await closed('openai', 'openai-openai-50c')
  const claude = await closed('claude-channel', 'openai-claude-50c')
  const anthropic = await closed('anthropic-client', 'anthropic-openai-50c')
  const after = await closed('openai', 'openai-openai-50c-after')
  const base = round(((before.rps ?? 0) + (after.rps ?? 0)) / 2, 0)
  for (const r of [claude, anthropic]) {
    r.ratio = round((r.rps ?? 0) / (base || 1), 3)
    r.ratioTo = `mean of ${before.id} and ${after.id}`
    check(ctx, r.id, 'stream throughput within 15% of the OpenAI-to-OpenAI path',
      `${pct(r.ratio)} (${r.rps} vs ${base} req/s; ${before.rps} before, ${after.rps} after)`, r.ratio >= 0.85 && r.errors === 0)
  }

  const open = async (path: Path, id: string): Promise<ScenarioResult> => {
    const job: LoadJob = { kind: 'rate', request: streamRequest(ctx, path, true), rate: RATE, seconds: ctx.opts.duration, connections: OPEN_LOOP_CONNECTIONS, stream: true }
    return (await measure(ctx, { id, group: 'protocols', title: `20-chunk paced stream, ${TITLES[path]}`, via: 'gateway', load: `${RATE} req/s open loop, chunks 5 ms apart`, job })).result
  }
  const reference = await open('openai', 'openai-openai-300rps')
  for (const [path, id] of [['claude-channel', 'openai-claude-300rps'], ['anthropic-client', 'anthropic-openai-300rps']] as const) {
    const r = await open(path, id)
    setAdded(r, reference, 'firstByte')
    r.notes = [...r.notes ?? [], `first byte p50 ${r.firstByteP50} ms against ${reference.firstByteP50} ms OpenAI to OpenAI`]
    check(ctx, r.id, 'first-byte p50 within 1 ms of the OpenAI-to-OpenAI path', `${r.addedP50 >= 0 ? '+' : ''}${r.addedP50} ms (${r.firstByteP50} vs ${reference.firstByteP50} ms)`, r.addedP50 <= 1 && r.errors === 0)
  }
}
