import { randomBytes } from 'node:crypto'
import type { UsageEvent } from '@modelgate/contracts'
import { costOf, type Price } from '@modelgate/pricing'
import {
  adaptorFor, authorized, classifyAnswer, type ClassifiedFailure, cleanUpstreamMessage, CredentialError, type Outbound, realtimeRequest, realtimeSupported, realtimeUsage, type UpstreamRequest,
  type Usage, withOverrides
} from '@modelgate/providers'
import type { Lease } from '@modelgate/quota'
import type { FastifyRequest } from 'fastify'
import WebSocket from 'ws'
import { admissionLimits, admit, checkUserRateLimit, countSuccess, modelPrice, NO_LIMITS, pinnedChannel, type UserRateLimit } from './admission.js'
import { ChannelAttempts, mappedStatus, type UsageError } from './attempts.js'
import { authenticate, type Caller, checkModel, extractKey } from './auth.js'
import type { Entitlement } from './callers.js'
import type { RouteDeps } from './deps.js'
import { englishMessage, RelayError, relayMessage, RM } from './errors.js'
import { channelConfig, type RelayChannel } from './state.js'
import { type UsageRecord, usageEvent } from './usage-event.js'

/** Largest client event (OpenAI takes audio appends up to 15 MiB). */
export const CLIENT_MAX_PAYLOAD = 16 * 1024 * 1024
const UPSTREAM_MAX_PAYLOAD = 64 * 1024 * 1024
/** Bytes queued towards one side before the other side is paused, and the level it resumes at. */
const HIGH_WATER = 4 * 1024 * 1024
const LOW_WATER = 1024 * 1024
/** Client events held while a quota check runs before one is paused. */
const MAX_QUEUED = 256
/** How long responses in flight may take to report their usage once the client has gone. */
const GRACE_MS = 5000
const KEY_PROTOCOL = 'openai-insecure-api-key.'
const BETA_PROTOCOL = 'openai-beta.realtime-v1'

// Events are found by their type's quoted name before any JSON is parsed: audio deltas are large
// and frequent, and a quoted name cannot appear inside a JSON string (its quotes would be escaped).
const RESPONSE_CREATE = Buffer.from('"response.create"')
const RESPONSE_CREATED = Buffer.from('"response.created"')
const RESPONSE_DONE = Buffer.from('"response.done"')

type Json = Readonly<Record<string, unknown>>
type Frame = [data: Buffer, binary: boolean]

const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const field = (v: unknown, key: string): unknown => (isJson(v) ? v[key] : undefined)
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

function parseEvent (data: Buffer): Json | undefined {
  try {
    const v: unknown = JSON.parse(data.toString('utf8'))
    return isJson(v) ? v : undefined
  } catch {
    return undefined
  }
}

function toBuffer (data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)
}

/** The offered subprotocols of a handshake (`Sec-WebSocket-Protocol`). */
function offeredProtocols (header: string | string[] | undefined): string[] {
  const all = Array.isArray(header) ? header.join(',') : header ?? ''
  return all.split(',').map((p) => p.trim()).filter((p) => p !== '')
}

/**
 * The subprotocol the gateway answers with: `realtime` when offered (OpenAI's browser clients),
 * else the first that does not carry a key; a key is never echoed back.
 */
export function chooseProtocol (offered: Set<string>): string | false {
  if (offered.has('realtime')) return 'realtime'
  for (const p of offered) if (!p.startsWith(KEY_PROTOCOL)) return p
  return false
}

/** A close code the gateway may send to the client for the upstream's `code`. */
function clientCode (code: number): number {
  if (code === 1005) return 1000
  // The upstream's connection dropped without a close frame: the gateway's upstream failed.
  if (code === 1006) return 1014
  const sendable = (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
  return sendable ? code : 1011
}

/** A realtime `error` event, as OpenAI sends them. */
function errorEvent (type: string, code: string, message: string, clientEventId: string | null): string {
  return JSON.stringify({ type: 'error', event_id: `event_${randomBytes(12).toString('hex')}`, error: { type, code, message, param: null, event_id: clientEventId } })
}

function pauseIf (ws: WebSocket, hold: boolean): void {
  if (hold && !ws.isPaused) ws.pause()
  else if (!hold && ws.isPaused) ws.resume()
}

/** An upstream websocket that finished its handshake, its first frames held until the client is there. */
interface OpenedUpstream {
  ws: WebSocket
  early: Frame[]
  closed?: { code: number, reason: Buffer }
  detach: () => void
}

type Attempt =
  | { kind: 'open', upstream: OpenedUpstream }
  | { kind: 'refused', status: number, contentType: string, text: string }
  | { kind: 'unreachable', err: unknown }
  | { kind: 'gone' }

/**
 * Opens the upstream websocket. A refused handshake yields the upstream's status and body (read
 * up to 64 KiB) for classification; frames that arrive before the client's socket is upgraded are
 * held, and the upstream is paused meanwhile.
 */
async function openUpstream (up: UpstreamRequest, timeoutMs: number, gone: AbortSignal, outbound: Outbound): Promise<Attempt> {
  return await new Promise<Attempt>((resolve) => {
    let settled = false
    const finish = (a: Attempt) => {
      if (settled) return
      settled = true
      gone.removeEventListener('abort', onGone)
      resolve(a)
    }
    // The outbound guard: an IP literal judged here (sockets skip the lookup for one), a name by the lookup.
    const refusal = outbound.staticRefusal(new URL(up.url).hostname)
    if (refusal !== undefined) {
      resolve({ kind: 'unreachable', err: refusal })
      return
    }
    const ws = new WebSocket(up.url, { headers: up.headers, handshakeTimeout: timeoutMs, perMessageDeflate: false, maxPayload: UPSTREAM_MAX_PAYLOAD, followRedirects: false, lookup: outbound.lookupFor('admin') })
    const onGone = () => {
      ws.terminate()
      finish({ kind: 'gone' })
    }
    if (gone.aborted) {
      onGone()
      return
    }
    gone.addEventListener('abort', onGone)
    // Kept for the socket's life: a later error is followed by 'close', which the session handles.
    ws.on('error', (err) => { finish({ kind: 'unreachable', err }) })
    ws.once('unexpected-response', (request, res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (c: Buffer) => {
        if (size < 64 * 1024) chunks.push(c)
        size += c.length
      })
      const done = () => {
        finish({ kind: 'refused', status: res.statusCode ?? 502, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') })
        request.destroy()
      }
      res.once('end', done)
      res.once('error', done)
    })
    ws.once('open', () => {
      const upstream: OpenedUpstream = { ws, early: [], detach: () => {} }
      const onMessage = (data: WebSocket.RawData, binary: boolean) => { upstream.early.push([toBuffer(data), binary]) }
      const onClose = (code: number, reason: Buffer) => { upstream.closed = { code, reason } }
      ws.on('message', onMessage)
      ws.once('close', onClose)
      upstream.detach = () => {
        ws.off('message', onMessage)
        ws.off('close', onClose)
      }
      ws.pause()
      finish({ kind: 'open', upstream })
    })
  })
}

/** A reservation a session holds for its next response, and the entitlement item paying it (none: the wallet). */
interface Hold { id: string, amount: number, paidBy?: Entitlement | undefined }

/** A response of the session being billed: its request id, and what was reserved for it. */
interface Claim {
  id: string
  /** Whether a reservation exists under `id` (the billing worker corrects it at settlement). */
  held: boolean
  reserved: number
  createdAt: number
  paidBy?: Entitlement | undefined
}

/** A refused reservation, as the client is told. */
type Refusal = RelayError

/** Everything the admission established for one session. */
interface Admission {
  sessionId: string
  caller: Caller
  model: string
  group: string
  price: Price
  /** Each hold's amount: PreConsumedQuota, the pipeline's floor (a response's size is unknown). */
  holdAmount: number
  lease?: Lease
  rateLimit?: UserRateLimit
  ip: string
  startedAt: number
}

interface Connected {
  upstream: OpenedUpstream
  channel: RelayChannel
  upstreamModel: string
  /** The channels attempted, this one last. */
  tried: number[]
}

/**
 * The id of the n-th reservation of a session (at most 36 + 1 + 10 characters); no colon, which
 * BullMQ refuses in job ids (the usage publisher names a batch after its first event).
 */
const holdId = (sessionId: string, n: number): string => `${sessionId}.${n}`

/**
 * The usage record of one of the session's reservations: a response's on the connected channel,
 * or the admission's when no channel opened (`c` undefined).
 */
function usageRecord (a: Admission, requestId: string, startedAt: number, reserved: number, c: Connected | undefined, error: UsageError | undefined, paidBy: Entitlement | undefined): UsageRecord {
  return {
    requestId, startedAt, caller: a.caller, model: a.model, group: a.group, ip: a.ip, stream: true, price: a.price, reserved,
    channel: c?.channel, upstreamModel: c?.upstreamModel ?? a.model, tried: c?.tried ?? [], firstByteAt: 0, error, paidBy
  }
}

/** One relayed session: frames both ways, and one usage event per response. */
export class RealtimeSession {
  readonly #deps: RouteDeps
  readonly #req: FastifyRequest
  readonly #a: Admission
  readonly #c: Connected
  readonly #up: WebSocket
  #client: WebSocket | undefined
  /** The reservation the next response takes; the admission's at first. */
  #spare: Hold | undefined
  #seq: number
  /** Responses created and not yet billed, by response id. */
  readonly #open = new Map<string, Claim>()
  /** Responses the upstream is generating (created, not done), seen as the frames pass. */
  readonly #active = new Set<string>()
  /** Quota work in arrival order: reservations, claims and bills never overtake each other. */
  #chain: Promise<void> = Promise.resolve()
  /** Client frames held while a response.create waits for its quota check. */
  readonly #queue: Frame[] = []
  #checking = false
  #upstreamFull = false
  #clientFull = false
  #tokens = 0
  #clientClosed = false
  #upstreamClosed = false
  #finished = false
  #grace: NodeJS.Timeout | undefined

  constructor (deps: RouteDeps, req: FastifyRequest, a: Admission, c: Connected, first: Hold) {
    this.#deps = deps
    this.#req = req
    this.#a = a
    this.#c = c
    this.#up = c.upstream.ws
    this.#spare = first
    this.#seq = 1
  }

  /** The client's socket is upgraded: held upstream frames go first, then both ways flow. */
  start (client: WebSocket): void {
    this.#client = client
    const { upstream } = this.#c
    upstream.detach()
    client.on('message', (data, binary) => { this.#fromClient(toBuffer(data), binary) })
    client.on('close', () => { this.#onClientClose() })
    this.#up.on('message', (data, binary) => { this.#fromUpstream(toBuffer(data), binary) })
    this.#up.on('close', (code, reason) => { this.#onUpstreamClose(code, reason) })
    for (const [data, binary] of upstream.early.splice(0)) this.#fromUpstream(data, binary)
    if (upstream.closed !== undefined) this.#onUpstreamClose(upstream.closed.code, upstream.closed.reason)
    else this.#flow()
  }

  /** The client went away before its socket was upgraded (nothing once it was). */
  abandon (): void {
    if (this.#client !== undefined || this.#finished) return
    this.#c.upstream.detach()
    this.#clientClosed = true
    this.#upstreamClosed = true
    this.#up.close(1000, 'client closed')
    this.#finish()
  }

  /** Pauses or resumes each side: a side is paused while the other's outgoing buffer is full. */
  #flow (): void {
    const client = this.#client
    if (client === undefined) return
    pauseIf(this.#up, this.#clientFull)
    pauseIf(client, this.#upstreamFull || this.#queue.length >= MAX_QUEUED)
  }

  #send (to: WebSocket, data: Buffer | string, binary: boolean, full: (v: boolean) => void): void {
    if (to.readyState !== WebSocket.OPEN) return
    to.send(data, { binary }, () => {
      if (to.bufferedAmount < LOW_WATER) {
        full(false)
        this.#flow()
      }
    })
    if (to.bufferedAmount > HIGH_WATER) {
      full(true)
      this.#flow()
    }
  }

  #toClient (data: Buffer | string, binary: boolean): void {
    if (this.#client !== undefined) this.#send(this.#client, data, binary, (v) => { this.#clientFull = v })
  }

  #toUpstream (data: Buffer | string, binary: boolean): void {
    this.#send(this.#up, data, binary, (v) => { this.#upstreamFull = v })
  }

  #fromClient (data: Buffer, binary: boolean): void {
    if (this.#checking) {
      this.#queue.push([data, binary])
      this.#flow()
      return
    }
    if (!binary && data.includes(RESPONSE_CREATE)) {
      const event = parseEvent(data)
      if (event?.['type'] === 'response.create') {
        this.#checking = true
        void this.#ensureHold().then((refusal) => {
          if (refusal === undefined) this.#toUpstream(data, false)
          else this.#toClient(errorEvent(refusal.type, refusal.code ?? refusal.type, relayMessage(this.#req, refusal), text(event['event_id']) ?? null), false)
          this.#checking = false
          while (!this.#checking && this.#queue.length > 0) {
            const [next, nextBinary] = this.#queue.shift()!
            this.#fromClient(next, nextBinary)
          }
          this.#flow()
        })
        return
      }
    }
    this.#toUpstream(data, binary)
  }

  #fromUpstream (data: Buffer, binary: boolean): void {
    if (!binary && (data.includes(RESPONSE_CREATED) || data.includes(RESPONSE_DONE))) {
      const event = parseEvent(data)
      const response = field(event, 'response')
      const id = text(field(response, 'id'))
      if (event?.['type'] === 'response.created') this.#onCreated(id)
      else if (event?.['type'] === 'response.done') this.#onDone(id, response)
    }
    this.#toClient(data, binary)
  }

  /** Runs quota work after the work queued before it. */
  async #serial<T> (fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn)
    this.#chain = run.then(() => {}, () => {})
    return await run
  }

  /** {@link #serial} for work nobody waits for: a failure is logged. */
  #later (fn: () => Promise<void>): void {
    this.#serial(fn).catch((err: unknown) => { this.#req.log.error({ err }, 'realtime billing failed') })
  }

  /**
   * A reservation for the next response, unless one is held: the check before a client's
   * response.create. The refusal (no quota left, the quota store down) when it cannot be had.
   */
  async #ensureHold (): Promise<Refusal | undefined> {
    return await this.#serial(async () => {
      if (this.#spare !== undefined) return undefined
      const got = await this.#takeHold()
      if (got instanceof RelayError) return got
      this.#spare = got
      return undefined
    })
  }

  async #takeHold (): Promise<Hold | Refusal> {
    const { caller, group, model, holdAmount: amount } = this.#a
    const id = holdId(this.#a.sessionId, ++this.#seq)
    try {
      // The session's lease covers its admission limits: a response's reservation holds quota only.
      const { paidBy } = await admit(this.#deps, this.#req, caller, { requestId: id, amount, limits: NO_LIMITS, group, model })
      return { id, amount, paidBy }
    } catch (err) {
      if (err instanceof RelayError) return err
      throw err
    }
  }

  /**
   * Gives a response the held reservation, or takes one for it (responses the server starts on
   * its own, with voice activity detection, have no response.create before them). A response
   * that cannot have one is cancelled; what it used is still billed when its response.done comes.
   */
  async #claim (createdAt: number, responseId: string | undefined): Promise<Claim> {
    let hold = this.#spare
    this.#spare = undefined
    let refusal: Refusal | undefined
    if (hold === undefined) {
      const got = await this.#takeHold()
      if (got instanceof RelayError) refusal = got
      else hold = got
    }
    const claim: Claim = { id: hold?.id ?? holdId(this.#a.sessionId, ++this.#seq), held: hold !== undefined, reserved: hold?.amount ?? 0, createdAt, paidBy: hold?.paidBy }
    this.#deps.usage.expect()
    if (refusal !== undefined && responseId !== undefined) {
      this.#toUpstream(JSON.stringify({ type: 'response.cancel', event_id: `event_${randomBytes(12).toString('hex')}`, response_id: responseId }), false)
      this.#toClient(errorEvent(refusal.type, refusal.code ?? refusal.type, relayMessage(this.#req, refusal), null), false)
    }
    return claim
  }

  #onCreated (responseId: string | undefined): void {
    const createdAt = Date.now()
    if (responseId !== undefined) this.#active.add(responseId)
    this.#later(async () => {
      const claim = await this.#claim(createdAt, responseId)
      this.#open.set(responseId ?? claim.id, claim)
    })
  }

  #onDone (responseId: string | undefined, response: unknown): void {
    const doneAt = Date.now()
    if (responseId !== undefined) this.#active.delete(responseId)
    this.#later(async () => {
      let claim = responseId === undefined ? undefined : this.#open.get(responseId)
      if (responseId !== undefined) this.#open.delete(responseId)
      claim ??= await this.#claim(doneAt, undefined)
      this.#bill(claim, doneAt, response)
    })
    this.#closeUpstreamIfDone()
  }

  /** The usage event of one response.done: its usage (text, audio, cached) at the session's price. */
  #bill (claim: Claim, doneAt: number, response: unknown): void {
    const usage = realtimeUsage(field(response, 'usage'))
    const status = text(field(response, 'status')) ?? ''
    const tokens = usage === undefined ? 0 : usage.promptTokens + usage.completionTokens
    // completed and incomplete (token limit) responses were served; cancelled ones in part.
    const outcome: UsageEvent['outcome'] = status === 'cancelled' || (status === 'failed' && tokens > 0) ? 'aborted' : status === 'failed' ? 'failed' : 'success'
    const error = outcome === 'success' ? undefined : text(field(field(field(response, 'status_details'), 'error'), 'message')) ?? `response ${status}`
    if (usage === undefined && outcome !== 'failed') this.#req.log.warn({ channel: this.#c.channel.id }, 'realtime response.done without usage; billed nothing')
    this.#publish(claim, doneAt, outcome, usage, error)
  }

  #publish (claim: Claim, endedAt: number, outcome: UsageEvent['outcome'], usage: Usage | undefined, error: string | undefined): void {
    const { caller, price } = this.#a
    const { token, user } = caller.record
    const billable = outcome !== 'failed' && usage !== undefined
    const quota = billable ? costOf(price, usage) : 0
    this.#tokens += billable ? usage.promptTokens + usage.completionTokens : 0
    const failure = error === undefined ? undefined : { status: outcome === 'failed' ? 502 : 499, message: error }
    const record = usageRecord(this.#a, claim.id, claim.createdAt, claim.reserved, this.#c, failure, claim.paidBy)
    void this.#deps.usage.publish(usageEvent(record, outcome, quota, billable ? usage : undefined, billable ? 'upstream' : 'none', endedAt))
    const { quota: store } = this.#deps
    // No reservation under this id for the worker to correct: the cached balances take the cost here.
    if (!claim.held && quota > 0) {
      void store.adjust('user', user.id, -quota).catch(() => {})
      if (!token.unlimited) void store.adjust('token', token.id, -quota, user.id).catch(() => {})
    }
    const limit = this.#a.rateLimit
    if (outcome === 'success' && limit !== undefined) void countSuccess(this.#deps, limit)
  }

  #onClientClose (): void {
    this.#clientClosed = true
    // Nothing goes to the client any more: the upstream flows again so usage can still arrive.
    this.#clientFull = false
    if (this.#up.isPaused) this.#up.resume()
    if (this.#upstreamClosed) {
      this.#finish()
      return
    }
    if (this.#active.size === 0) {
      this.#up.close(1000, 'client closed')
      return
    }
    // Responses in flight are cancelled; their response.done still reports what they used.
    for (const id of this.#active) {
      this.#toUpstream(JSON.stringify({ type: 'response.cancel', event_id: `event_${randomBytes(12).toString('hex')}`, response_id: id }), false)
    }
    this.#grace = setTimeout(() => { this.#up.close(1000, 'client closed') }, GRACE_MS)
  }

  #closeUpstreamIfDone (): void {
    if (this.#clientClosed && !this.#upstreamClosed && this.#active.size === 0) {
      clearTimeout(this.#grace)
      this.#up.close(1000, 'client closed')
    }
  }

  #onUpstreamClose (code: number, reason: Buffer): void {
    this.#upstreamClosed = true
    clearTimeout(this.#grace)
    const client = this.#client
    if (client !== undefined && (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING)) {
      const sent = clientCode(code)
      client.close(sent, reason.length > 0 ? reason : sent === 1014 ? 'upstream connection lost' : 'upstream closed')
    }
    if (this.#clientClosed || client === undefined || client.readyState === WebSocket.CLOSED) this.#finish()
  }

  /**
   * Both sides are closed: responses that never reported their usage settle their reservation at
   * nothing, the reservation no response took is given back, and the session's leases end.
   */
  #finish (): void {
    if (this.#finished) return
    this.#finished = true
    clearTimeout(this.#grace)
    this.#later(async () => {
      const now = Date.now()
      for (const claim of this.#open.values()) this.#publish(claim, now, 'aborted', undefined, 'the session closed before the response reported its usage')
      this.#open.clear()
      const spare = this.#spare
      this.#spare = undefined
      const { token, user } = this.#a.caller.record
      // Nothing was billed against it, so only Redis holds it: given back without a usage event.
      if (spare !== undefined) await this.#deps.quota.settleMany([{ requestId: spare.id, userId: user.id, tokenId: token.id, actual: 0, ...(spare.paidBy === undefined ? {} : { itemId: spare.paidBy.itemId }) }]).catch((err: unknown) => { this.#req.log.warn({ err }, 'realtime reservation not given back; it lapses') })
      if (this.#a.lease !== undefined) this.#deps.quota.release(this.#a.lease, this.#tokens)
    })
  }
}

/**
 * Admission of one session, as the HTTP relay admits a request: the key (Bearer header, or the
 * `openai-insecure-api-key.` subprotocol browsers use), token and user checks, the model for the
 * token and group, a price, the user's rate limit, a reservation, then a channel whose realtime
 * websocket opens (failover as in the pipeline). Every refusal is an HTTP error in OpenAI's shape,
 * before the upgrade. The session, for the websocket handler that follows the upgrade; none when
 * the client left meanwhile.
 */
export async function admitSession (deps: RouteDeps, req: FastifyRequest<{ Querystring: { model?: string } }>): Promise<RealtimeSession | undefined> {
  const { state } = deps
  const offered = offeredProtocols(req.headers['sec-websocket-protocol'])
  const fromProtocol = offered.find((p) => p.startsWith(KEY_PROTOCOL))?.slice(KEY_PROTOCOL.length)
  if (fromProtocol !== undefined && fromProtocol !== '' && extractKey(req) === undefined) req.headers = { authorization: `Bearer ${fromProtocol}` }
  const caller = await authenticate(deps.callers, req)
  const model = typeof req.query.model === 'string' ? req.query.model : ''
  if (model === '') throw new RelayError(400, 'invalid_request_error', 'missing_model', RM.modelRequired)
  checkModel(caller, model, state.usableGroups)
  const group = caller.group
  const pinned = pinnedChannel(state, caller)
  if (pinned === undefined) state.checkServes(group, model)
  const price = modelPrice(state, model, group)
  const rateLimit = await checkUserRateLimit(deps, caller.record.user.id)

  const holdAmount = Math.max(0, Math.trunc(state.options.num('PreConsumedQuota')))
  const a: Admission = { sessionId: req.id, caller, model, group, price, holdAmount, ip: req.ip, startedAt: Date.now(), ...(rateLimit === undefined ? {} : { rateLimit }) }
  const firstId = holdId(a.sessionId, 1)
  const { lease, paidBy } = await admit(deps, req, caller, { requestId: firstId, amount: holdAmount, limits: admissionLimits(caller, 0), group, model })
  const first: Hold = { id: firstId, amount: holdAmount, paidBy }
  if (lease !== undefined) a.lease = lease

  const gone = new AbortController()
  const admittedSession: { session?: RealtimeSession } = {}
  // The client's socket closing before the upgrade: a connect in progress stops, an opened upstream closes.
  req.raw.socket.once('close', () => {
    gone.abort()
    admittedSession.session?.abandon()
  })
  let connected: Connected
  try {
    connected = await connect(deps, req, a, pinned, offered.includes(BETA_PROTOCOL) || /realtime=v1/i.test(String(req.headers['openai-beta'] ?? '')), gone.signal)
  } catch (err) {
    // Admitted and not served: one failed usage event settles the reservation at nothing.
    const status = err instanceof RelayError ? err.status : 499
    const message = err instanceof RelayError ? englishMessage(err, req.id) : 'the client left while the upstream connected'
    deps.usage.expect()
    void deps.usage.publish(usageEvent(usageRecord(a, first.id, a.startedAt, first.amount, undefined, { status, message }, first.paidBy), 'failed', 0, undefined, 'none'))
    if (a.lease !== undefined) deps.quota.release(a.lease, 0)
    throw err instanceof RelayError ? err : new RelayError(499, 'invalid_request_error', 'client_closed', 'client closed the connection')
  }
  const session = admittedSession.session = new RealtimeSession(deps, req, a, connected, first)
  if (req.raw.socket.destroyed) {
    session.abandon()
    return undefined
  }
  return session
}

/**
 * Opens the realtime websocket of a channel serving the model: channels of other types are passed
 * over, and refusals are classified as the pipeline classifies them (retry on another channel,
 * set a dead key or channel aside, or answer the client).
 */
async function connect (deps: RouteDeps, req: FastifyRequest, a: Admission, pinned: RelayChannel | undefined, beta: boolean, gone: AbortSignal): Promise<Connected> {
  // Channels of types without a realtime API never count as attempts.
  const attempts = new ChannelAttempts(deps, { group: a.group, model: a.model, pinned, promptTokens: 0, accepts: realtimeSupported })
  for (let channel = attempts.next(); channel !== undefined; channel = attempts.next()) {
    const adaptor = adaptorFor(channel.type)
    if (adaptor === undefined || !realtimeSupported(channel.type)) {
      attempts.failed({ status: 503, message: `channel type ${channel.type} has no realtime API`, type: 'service_unavailable', code: 'unsupported_channel' })
      continue
    }
    const key = attempts.takeKey()
    if (key === undefined) continue
    const config = channelConfig(channel, key)
    const upstreamModel = channel.modelMapping[a.model] ?? a.model
    let refused: { status: number, text: string, failure: ClassifiedFailure } | undefined
    try {
      // The channel's proxy setting is not used here: ws connects directly.
      const up = await authorized(adaptor, config, withOverrides(config, realtimeRequest(config, upstreamModel, { beta })))
      const opened = await openUpstream(up, deps.upstreamTimeoutMs, gone, deps.outbound)
      if (opened.kind === 'open') return { upstream: opened.upstream, channel, upstreamModel, tried: attempts.tried }
      if (opened.kind === 'gone') throw new RelayError(499, 'invalid_request_error', 'client_closed', 'client closed the connection')
      if (opened.kind === 'unreachable') {
        req.log.warn({ err: opened.err, channel: channel.id }, 'realtime upstream unreachable')
        attempts.failed({ status: 502, message: 'upstream unreachable or timed out', type: 'upstream_error', code: 'upstream_unreachable' })
        continue
      }
      refused = { status: opened.status, text: opened.text, failure: classifyAnswer(adaptor, opened.status, opened.contentType, opened.text) }
    } catch (err) {
      if (err instanceof RelayError) throw err
      if (!(err instanceof CredentialError)) {
        req.log.warn({ err, channel: channel.id }, 'realtime upstream request could not be built')
        attempts.failed({ status: 503, message: 'the channel is misconfigured', type: 'service_unavailable', code: 'channel_misconfigured' })
        continue
      }
      refused = { status: err.status, text: '', failure: err.failure() }
    }
    const { status, failure } = refused
    req.log.warn({ channel: channel.id, status, action: failure.action }, 'realtime upstream refused')
    if (await attempts.refused(status, failure) === 'client') {
      throw new RelayError(mappedStatus(channel, status), status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error', failure.code ?? null, cleanUpstreamMessage(failure.message))
    }
  }
  throw attempts.finalError()
}
