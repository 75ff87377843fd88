import { once } from 'node:events'
import { costOf } from '@modelgate/pricing'
import { adaptorFor, classifyAnswer, type ClassifiedFailure, cleanUpstreamMessage, type ConvertedResponse, CredentialError, isStreamAnswer, type ClientFormat, type Endpoint, type RelayRequest, type StreamConverter, unexpectedAnswer, upstreamRequest, type Usage } from '@modelgate/providers'
import { type Span, SpanKind, SpanStatusCode, startSpan, traceparentOf, tracing } from '@modelgate/service'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { admissionLimits, admit, checkUserRateLimit, countSuccess, modelPrice, pinnedChannel } from './admission.js'
import { ChannelAttempts, mappedStatus, TIMED_OUT, upstreamReport } from './attempts.js'
import { type Caller, checkModel } from './auth.js'
import type { RelayDeps } from './deps.js'
import { englishMessage, RelayError, RM } from './errors.js'
import { countUpstreamError, failureKind, observeFirstByte, observeRelay, observeUpstream, refusalKind } from './metrics.js'
import { approxCounter, exactCounter, maxTokensOf, promptText, promptTokensOf } from './estimate.js'
import { channelCall, convertedBody, type Inbound, interruptionEvent } from './inbound.js'
import { channelConfig, type RelayChannel } from './state.js'
import { type CallTimeouts, ClientGone, isTimeout, multipartField, readAll, readText, send, type UpstreamResponse } from './upstream.js'
import { refusalEvent, type UsageRecord, usageEvent } from './usage-event.js'

/** Streamed bytes held for counting before they are counted (when the upstream may report no usage). */
const COUNT_SLICE = 64 * 1024
/** Largest non-streamed upstream answer the gateway will hold. */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024

/** One admitted request: its usage record, and what the pipeline learned about it for its bill. */
interface Outcome extends UsageRecord {
  channel?: RelayChannel
  answered: boolean
  /** The answer was cut short (client gone or upstream stream broken) after the upstream began it: billed for what was sent. */
  aborted: boolean
  /** The client left before the answer was complete, even before the upstream answered (not billed then). */
  clientLeft: boolean
  /** The upstream's own usage report. */
  usage?: Usage
  countedCompletion: number
  /** A whole answer's text still to count (counted after the client has it). */
  completionText?: string
}

/**
 * One relay request end to end (ARCHITECTURE.md "Relay and money"): checks, channel choice, reservation,
 * upstream call with failover, the answer (streamed without buffering), and exactly one usage
 * event for every admitted request, whatever happens after admission.
 */
/** How a request in another protocol than OpenAI's came in: its format, and what its URL says. */
export interface InboundOptions {
  format?: ClientFormat
  /** The model named by the URL (Gemini's /v1beta/models/{model}:...), not by the body. */
  model?: string
  /** Streaming chosen by the URL (Gemini's :streamGenerateContent), not by the body. */
  stream?: boolean
  /** Gemini streams: SSE (`alt=sse`) or one JSON array sent piece by piece. */
  streamMode?: 'sse' | 'json'
}

export async function relay (deps: RelayDeps, req: FastifyRequest, reply: FastifyReply, endpoint: Endpoint, caller: Caller, opts: InboundOptions = {}): Promise<void> {
  // Metrics always (a clock read and one histogram observation); a span only with tracing on.
  const began = performance.now()
  const startedAt = Date.now()
  const span = tracing.enabled ? startSpan('relay', undefined, SpanKind.SERVER) : undefined
  // Refused until admitted; then the usage event's outcome (success, failed, aborted).
  span?.setAttribute('modelgate.outcome', 'refused')
  const progress: Progress = { admitted: false, model: '' }
  let status = 500
  let refusal: RelayError | undefined
  try {
    await relayRequest(deps, req, reply, endpoint, caller, opts, span, progress)
    status = reply.statusCode
  } catch (err) {
    status = err instanceof RelayError ? err.status : (err as { statusCode?: number }).statusCode ?? 500
    if (err instanceof RelayError && !progress.admitted) refusal = err
    throw err
  } finally {
    const body = req.body as { stream?: unknown } | null | undefined
    const stream = opts.stream ?? (typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && body.stream === true)
    if (refusal !== undefined) recordRefusal(deps, req, caller, refusal, { startedAt, model: progress.model, stream, span })
    observeRelay(endpoint, status, stream, (performance.now() - began) / 1000)
    if (span !== undefined) {
      span.setAttribute('modelgate.endpoint', endpoint)
      span.setAttribute('http.response.status_code', status)
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      span.end()
    }
  }
}

/** How far a request got: the model once known, and whether it was admitted (then its usage event follows). */
interface Progress { admitted: boolean, model: string }

/**
 * Refusals not recorded even with ErrorLogEnabled: the quota store unreachable is the gateway's
 * own outage, not the caller's doing, and its events would queue on the Redis that is down.
 */
const UNRECORDED_REFUSALS: ReadonlySet<string | null> = new Set(['quota_store_unavailable'])

/**
 * With ErrorLogEnabled, a request refused after its caller was known (a model without a price or
 * not available, the token's limits, the balance, a body without a model, ...) is recorded as
 * one `refused` usage event: quota 0, nothing reserved; the billing worker writes only its error
 * log row. The client's answer does not wait for it.
 */
function recordRefusal (deps: RelayDeps, req: FastifyRequest, caller: Caller, err: RelayError, r: { startedAt: number, model: string, stream: boolean, span: Span | undefined }): void {
  if (!deps.state.options.bool('ErrorLogEnabled') || UNRECORDED_REFUSALS.has(err.code)) return
  const event = refusalEvent({
    requestId: req.id, startedAt: r.startedAt, caller, model: r.model, ip: req.ip, stream: r.stream, status: err.status, message: englishMessage(err, req.id)
  })
  // The worker's settlement span continues this trace.
  if (r.span !== undefined) event.traceparent = traceparentOf(r.span)
  // Dropped while the queue does not answer (its outage is reported there) or at shutdown.
  if (!deps.usage.publishRefusal(event)) req.log.debug({ code: err.code }, 'refusal not recorded: the usage queue is not answering or the gateway is closing')
}

async function relayRequest (deps: RelayDeps, req: FastifyRequest, reply: FastifyReply, endpoint: Endpoint, caller: Caller, opts: InboundOptions, span: Span | undefined, progress: Progress): Promise<void> {
  const format = opts.format ?? 'openai'
  const startedAt = Date.now()
  const { state } = deps
  const multipart = endpoint === 'images_edits' || endpoint === 'audio_transcriptions' || endpoint === 'audio_translations'
  let body: Record<string, unknown> | undefined
  let raw: RelayRequest['raw']
  let model: string | undefined
  if (multipart) {
    const contentType = String(req.headers['content-type'] ?? '')
    const data = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
    raw = { contentType, data }
    model = multipartField(contentType, data, 'model')
  } else {
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body) || Buffer.isBuffer(req.body)) {
      throw new RelayError(400, 'invalid_request_error', 'invalid_body', RM.bodyNotObject)
    }
    body = req.body as Record<string, unknown>
    model = opts.model ?? (typeof body['model'] === 'string' ? body['model'] : undefined)
  }
  if (model === undefined || model === '') throw new RelayError(400, 'invalid_request_error', 'missing_model', RM.modelRequired)
  progress.model = model
  span?.setAttribute('modelgate.model', model)
  checkModel(caller, model, state.usableGroups)
  const stream = opts.stream ?? body?.['stream'] === true
  const inbound: Inbound = { format, endpoint, stream, streamMode: opts.streamMode, model, body, raw, headers: forwardedHeaders(req, format) }
  // What the checks and the estimate read: the body, or its chat form when its own shape is not
  // chat-like (Gemini's contents and parts).
  const chatLike = body === undefined ? undefined : format === 'gemini' ? convertedBody(inbound) : body
  if (chatLike !== undefined) {
    const words = state.sensitiveWords
    if (words.length > 0) {
      const text = promptText(chatLike).toLowerCase()
      if (words.some((w) => text.includes(w))) throw new RelayError(400, 'invalid_request_error', 'sensitive_words_detected', RM.sensitive)
    }
  }

  const group = caller.group
  const pinned = pinnedChannel(state, caller)
  if (pinned === undefined) state.checkServes(group, model)
  const price = modelPrice(state, model, group)

  const limit = await checkUserRateLimit(deps, caller.record.user.id)

  const estimatedPrompt = chatLike === undefined ? 0 : promptTokensOf(chatLike, approxCounter)
  // The best estimate of the cost, or PreConsumedQuota when that is larger (a floor, as in
  // new-api): a balance that covers the request with a margin admits it.
  const preConsumed = Math.max(0, Math.trunc(state.options.num('PreConsumedQuota')))
  const reserved = Math.max(costOf(price, { promptTokens: estimatedPrompt, completionTokens: chatLike === undefined ? 0 : maxTokensOf(chatLike) }), preConsumed)
  const { lease, paidBy } = await admit(deps, req, caller, { requestId: req.id, amount: reserved, limits: admissionLimits(caller, estimatedPrompt), group, model }, span)

  // Admitted: from here on exactly one usage event, whatever happens.
  progress.admitted = true
  deps.usage.expect()
  const outcome: Outcome = {
    requestId: req.id, startedAt, caller, model, group, ip: req.ip, stream, price, reserved,
    upstreamModel: model, tried: [], firstByteAt: 0, answered: false, aborted: false, clientLeft: false, countedCompletion: 0, paidBy
  }
  try {
    await callUpstreams(deps, req, reply, { inbound, model, pinned, group, outcome, promptTokens: estimatedPrompt, span })
  } finally {
    if (outcome.firstByteAt > 0) observeFirstByte(endpoint, stream, (outcome.firstByteAt - startedAt) / 1000)
    const billable = outcome.answered || outcome.aborted
    // Without the upstream's usage, the bill is counted exactly (never the reservation's estimate).
    const count = outcome.usage === undefined && billable ? await exactCounter() : undefined
    const usage: Usage = outcome.usage ?? {
      promptTokens: count !== undefined && chatLike !== undefined ? promptTokensOf(chatLike, count) : 0,
      completionTokens: outcome.countedCompletion + (count !== undefined && outcome.completionText !== undefined ? count(outcome.completionText) : 0)
    }
    const quota = billable ? costOf(price, usage) : 0
    if (lease !== undefined) deps.quota.release(lease, billable ? usage.promptTokens + usage.completionTokens : 0)
    // A client that left is 'aborted' whenever it left, before the first byte too (REL-33).
    const event = usageEvent(outcome, outcome.answered ? 'success' : outcome.aborted || outcome.clientLeft ? 'aborted' : 'failed', quota,
      billable ? usage : undefined, outcome.usage !== undefined ? 'upstream' : billable ? 'counted' : 'none')
    if (span !== undefined) {
      // The worker's settlement span continues this trace.
      event.traceparent = traceparentOf(span)
      span.setAttribute('modelgate.channel_id', event.channel_id)
      span.setAttribute('modelgate.outcome', event.outcome)
    }
    // Not awaited: the publisher holds the event (never rejecting; close() drains it), so the
    // request's own objects are free at once rather than living on through the batch window.
    void deps.usage.publish(event)
    if (outcome.answered && limit !== undefined) await countSuccess(deps, limit)
  }
}

/** Client headers a native adaptor may forward (Anthropic's version and beta flags). */
function forwardedHeaders (req: FastifyRequest, format: ClientFormat): Record<string, string> | undefined {
  if (format !== 'anthropic') return undefined
  const out: Record<string, string> = {}
  for (const name of ['anthropic-version', 'anthropic-beta']) {
    const v = req.headers[name]
    if (typeof v === 'string' && v !== '') out[name] = v
  }
  return out
}

interface CallPlan {
  /** The prompt's estimated tokens: channels with a lower max_input_tokens are passed over. */
  promptTokens: number
  inbound: Inbound
  model: string
  pinned?: RelayChannel
  group: string
  outcome: Outcome
  /** The relay request's span (tracing on): the upstream calls are its children. */
  span?: Span | undefined
}

async function callUpstreams (deps: RelayDeps, req: FastifyRequest, reply: FastifyReply, plan: CallPlan): Promise<void> {
  const { outcome } = plan
  // The OpenAI chat form of a request in another protocol, made once when a channel needs it.
  let chatBody: Record<string, unknown> | undefined
  const converted = () => (chatBody ??= convertedBody(plan.inbound))
  const attempts = new ChannelAttempts(deps, plan, outcome.tried)
  const clientGone = new ClientGone()
  const onClose = () => { if (!reply.raw.writableFinished) clientGone.abort() }
  reply.raw.once('close', onClose)
  const calls: UpstreamResponse[] = []
  const timeouts: CallTimeouts = { idleMs: deps.upstreamTimeoutMs, firstByteMs: deps.upstreamFirstByteTimeoutMs }
  try {
    for (let channel = attempts.next(); channel !== undefined; channel = attempts.next()) {
      outcome.channel = channel
      const adaptor = adaptorFor(channel.type)
      const call = adaptor === undefined ? undefined : channelCall(plan.inbound, adaptor, channel.modelMapping[plan.model] ?? plan.model, converted)
      if (adaptor === undefined || call === undefined) {
        attempts.failed({ status: 503, message: `channel type ${channel.type} cannot serve this endpoint`, type: 'service_unavailable', code: 'unsupported_channel' })
        continue
      }
      const key = attempts.takeKey()
      if (key === undefined) continue
      outcome.upstreamModel = call.req.model
      const relayReq: RelayRequest = call.req
      const config = channelConfig(channel, key)
      const upSpan = plan.span === undefined ? undefined : startSpan('upstream', plan.span, SpanKind.CLIENT)
      upSpan?.setAttribute('modelgate.channel_id', channel.id)
      try {
        // A refusal: the upstream's non-2xx answer, or the channel's credentials refused while authorizing.
        let refused: { status: number, text: string, failure: ClassifiedFailure } | undefined
        let res: UpstreamResponse | undefined
        const sentAt = performance.now()
        try {
          // Only a stream has a first-byte timeout: a whole answer's first byte comes when it is all made.
          res = await send(await upstreamRequest(adaptor, config, relayReq), clientGone, relayReq.stream ? timeouts : { idleMs: timeouts.idleMs }, deps.outbound.dispatcher(channel.proxyUrl))
          observeUpstream(channel.id, (performance.now() - sentAt) / 1000)
          upSpan?.setAttribute('http.response.status_code', res.status)
          if (deps.inFlight !== undefined) {
            calls.push(res)
            deps.inFlight.add(res)
          }
        } catch (err) {
          // The client left before the upstream answered: nothing to bill, nothing to retry.
          if (clientGone.aborted) { outcome.clientLeft = true; return }
          if (err instanceof CredentialError) {
            refused = { status: err.status, text: '', failure: err.failure() }
          } else {
            observeUpstream(channel.id, (performance.now() - sentAt) / 1000)
            countUpstreamError(channel.id, failureKind(err))
            upSpan?.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream unreachable or timed out' })
            req.log.warn({ err, channel: channel.id }, 'upstream unreachable')
            attempts.failed(isTimeout(err) ? TIMED_OUT : { status: 502, message: 'upstream unreachable', type: 'upstream_error', code: 'upstream_unreachable' })
            continue
          }
        }
        if (res !== undefined && (res.status < 200 || res.status >= 300)) {
          const text = await readText(res).catch(() => '')
          // Classified, its message cleaned; a body that is not JSON only described (classifyAnswer).
          refused = { status: res.status, text, failure: classifyAnswer(adaptor, res.status, res.contentType, text) }
        }
        // A complete answer (an upstream may answer a stream request with plain JSON: relayed as a
        // complete answer unless the adaptor takes it for its stream framing) is converted before
        // anything is sent: a 2xx answer whose body reports a failure (ConvertedResponse.failure;
        // Baidu's errors come with HTTP 200) is a refusal, and so is one that cannot be the
        // provider's (an HTML page, a text: unexpectedAnswer), whose text goes nowhere.
        let answer: ConvertedResponse | undefined
        if (refused === undefined && res !== undefined && !(relayReq.stream && isStreamAnswer(adaptor, res.contentType))) {
          const data = await readAll(res, MAX_ANSWER_BYTES)
          const unexpected = unexpectedAnswer(relayReq.endpoint, res.contentType, data)
          if (unexpected !== undefined) refused = { status: res.status, text: '', failure: unexpected }
          else {
            answer = adaptor.convertResponse(config, relayReq, res.status, res.contentType, data)
            if (answer.failure !== undefined) refused = { status: answer.status, text: data.toString('utf8'), failure: answer.failure }
          }
        }
        if (refused !== undefined || res === undefined) {
          const { status, text, failure } = refused ?? { status: 502, text: '', failure: { action: 'retry', message: 'no answer' } satisfies ClassifiedFailure }
          req.log.warn({ channel: channel.id, status, action: failure.action }, 'upstream refused')
          countUpstreamError(channel.id, refusalKind(status))
          upSpan?.setStatus({ code: SpanStatusCode.ERROR, message: `refused ${status}` })
          if (await attempts.refused(status, failure) === 'client') {
            // About the client's own request (an error shape said so): its words, cleaned, are the client's to read.
            const message = cleanUpstreamMessage(failure.message)
            outcome.error = { status, message, upstream: upstreamReport(status, message, failure.code) }
            await reply.code(mappedStatus(channel, status)).header('content-type', 'application/json; charset=utf-8')
              .send(call.errorBody(status, message, text, failure.code ?? null))
            return
          }
          continue
        }
        if (answer === undefined) {
          const result = await pipeStream(call.stream(adaptor.createStream(config, relayReq)), res, reply, outcome, clientGone, plan.inbound)
          if (result === 'retry') {
            // Headers, then nothing until a timeout: the stream never began (never a 429's "saturated").
            const timedOut = isTimeout(res.error)
            countUpstreamError(channel.id, timedOut ? 'timeout' : 'read_failed')
            upSpan?.setStatus({ code: SpanStatusCode.ERROR, message: timedOut ? 'stream timed out before any data' : 'stream ended before any data' })
            attempts.lost(timedOut ? TIMED_OUT : { status: 502, message: 'upstream stream ended before any data', type: 'upstream_error', code: 'upstream_stream_empty' })
            continue
          }
          return
        }
        answer = call.response(answer)
        outcome.usage = answer.usage
        if (answer.usage === undefined) outcome.completionText = answer.text
        outcome.answered = true
        outcome.firstByteAt = Date.now()
        await reply.code(answer.status).header('content-type', answer.contentType).send(answer.body)
        return
      } catch (err) {
        if (clientGone.aborted) { outcome.clientLeft = true; return }
        req.log.warn({ err, channel: channel.id }, 'upstream answer failed')
        const timedOut = isTimeout(err)
        countUpstreamError(channel.id, timedOut ? 'timeout' : 'read_failed')
        upSpan?.setStatus({ code: SpanStatusCode.ERROR, message: timedOut ? 'upstream answer timed out' : 'upstream answer could not be read' })
        attempts.lost(timedOut ? TIMED_OUT : { status: 502, message: 'upstream answer could not be read', type: 'upstream_error', code: 'upstream_read_failed' })
      } finally {
        upSpan?.end()
      }
    }
    throw attempts.finalError(outcome, req.id)
  } finally {
    reply.raw.off('close', onClose)
    for (const res of calls) deps.inFlight?.delete(res)
  }
}

/**
 * Forwards a stream as it arrives. Headers go out with the first converted bytes, so an upstream
 * that fails before sending anything can still be retried; after that nothing is retried. A
 * client that leaves aborts the upstream call; an upstream that dies ends the client's stream
 * with an error event rather than a clean finish.
 */
async function pipeStream (
  conv: StreamConverter,
  res: UpstreamResponse,
  reply: FastifyReply,
  outcome: Outcome,
  clientGone: ClientGone,
  inbound: Inbound
): Promise<'done' | 'retry'> {
  const out = reply.raw
  let started = false
  const begin = () => {
    started = true
    outcome.firstByteAt = Date.now()
    reply.hijack()
    out.writeHead(200, {
      // Gemini's streamGenerateContent without alt=sse answers one JSON array, sent piece by piece.
      'content-type': inbound.streamMode === 'json' ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no'
    })
  }
  const write = async (data: Buffer | string) => {
    if (data.length === 0 || clientGone.aborted) return
    if (!started) begin()
    if (!out.write(data)) await Promise.race([once(out, 'drain'), once(out, 'close')])
  }
  let upstreamError = false
  // Set once the upstream's end marker ([DONE], response.completed, ...) has gone to the client
  // together with the end of the response: the client is done as soon as the upstream said so,
  // not when the upstream's connection gets round to ending the body.
  let closed = false
  // Reasons the upstream's flow is stopped (a full client socket, a slice being counted); it
  // flows again when none is left.
  let holds = 0
  const hold = () => { holds++ }
  const release = () => { if (--holds === 0) res.resume() }
  let draining = false
  let counting = Promise.resolve()
  // The chunks the upstream's connection delivers at once (one read, many HTTP chunks) leave in
  // one write: corked until the end of the tick, so nothing waits beyond the chunks at hand.
  let corked = false
  const uncork = () => {
    corked = false
    out.uncork()
  }
  try {
    await res.read((chunk) => {
      if (clientGone.aborted) return true
      // Never after the end: the socket may serve the client's next request by the next tick.
      if (!corked && !closed) {
        corked = true
        out.cork()
        process.nextTick(uncork)
      }
      const data = conv.push(chunk)
      if (!closed && conv.finished()) {
        closed = true
        if (!started) begin()
        out.end(data)
      } else if (!closed && data.length > 0) {
        if (!started) begin()
        if (!out.write(data) && !draining) {
          draining = true
          hold()
          const drained = () => {
            out.off('drain', drained)
            out.off('close', drained)
            draining = false
            release()
          }
          out.on('drain', drained)
          out.on('close', drained)
        }
      }
      // The streamed text is counted only if the upstream reports no usage (most do); the
      // converter holds it (unread) until then, and it is counted in slices of COUNT_SLICE
      // bytes, so memory stays bounded either way.
      if (conv.untakenBytes() > COUNT_SLICE) {
        const text = conv.takeText()
        hold()
        counting = counting.then(async () => { outcome.countedCompletion += (await exactCounter())(text) }).finally(release)
      }
      return holds === 0
    })
  } catch {
    upstreamError = !clientGone.aborted && !closed
  }
  if (closed) conv.end()
  await counting
  outcome.usage = conv.usage()
  if (outcome.usage === undefined) outcome.countedCompletion += (await exactCounter())(conv.takeText())
  if (closed) {
    outcome.answered = true
    return 'done'
  }
  if (clientGone.aborted) {
    outcome.aborted = true
    if (started && !out.writableEnded) out.end()
    return 'done'
  }
  if (!started && (upstreamError || !conv.finished())) return 'retry'
  if (conv.finished() && !upstreamError) {
    await write(conv.end())
    outcome.answered = true
  } else {
    outcome.aborted = true
    outcome.error = { status: 502, message: 'upstream stream ended unexpectedly' }
    await write(interruptionEvent(inbound.format, RM.streamInterrupted.en))
  }
  if (!out.writableEnded) out.end()
  return 'done'
}
