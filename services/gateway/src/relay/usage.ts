import { USAGE_BATCH_JOB, USAGE_QUEUE, type UsageBatch, type UsageEvent } from '@modelgate/contracts'
import { Queue } from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'
import { trackUsageBuffer, usageEventsLost, usageEventsPublished } from './metrics.js'

/** How the publisher groups events: at most `max` per job, none held longer than `waitMs`. */
export interface UsageBatching { max: number, waitMs: number }

// 50 ms: at 1,000 requests a second a job carries about 50 events, so the queue's and the
// worker's per-job work is spread thin (measured against 20 ms: the worker's CPU per settled
// event fell by a quarter at 4,000 requests a second); the client has its answer before its
// event is queued, and the balance in Redis already holds the reservation meanwhile.
const DEFAULT_BATCHING: UsageBatching = { max: 500, waitMs: 50 }
/** Usage events kept in memory while Redis is away (about 1 KB each): a bound on the memory it costs. */
const MAX_HELD_EVENTS = 100_000

/**
 * Puts every admitted request's usage event on the `usage` queue, grouped: the events finished
 * within `waitMs` go out as one job, so the queue's per-job cost (a Lua script on each side) is
 * paid once per batch instead of once per request. The job id derives from the batch's first
 * request id, so a retried add cannot create a second job; settlement is idempotent per event
 * anyway. A failed add is retried, then logged with the whole events (they carry no secret) so
 * nothing billable disappears silently. close() sends what is buffered.
 */
export class UsagePublisher {
  readonly queue: Queue
  readonly #log: FastifyBaseLogger
  readonly #batching: UsageBatching
  #buffer: Array<{ event: UsageEvent, done: () => void }> = []
  #timer: NodeJS.Timeout | undefined
  readonly #sending = new Set<Promise<void>>()
  /** Admitted requests whose event has not been published yet. */
  #pending = 0
  #idle: Array<() => void> = []
  /** Events whose sending failed and is being retried (Redis away). */
  #held = 0
  readonly #maxHeld: number
  #closing = false
  /** Events of the batches being sent. */
  #sendingEvents = 0
  readonly #untrack: () => void

  constructor (connection: object, prefix: string, log: FastifyBaseLogger, batching: UsageBatching = DEFAULT_BATCHING, maxHeld = MAX_HELD_EVENTS) {
    this.queue = new Queue(USAGE_QUEUE, { connection, prefix })
    this.#log = log
    this.#batching = batching
    this.#maxHeld = maxHeld
    this.#untrack = trackUsageBuffer(this)
  }

  /** Events in memory not yet on the queue: batching, or being sent (not counting the held ones). */
  get pendingEvents (): number {
    return this.#buffer.length + this.#sendingEvents - this.#held
  }

  /** Events held in memory because the queue did not answer. */
  get held (): number {
    return this.#held
  }

  /** Counts an admitted request: its event will follow, and drain() waits for it. */
  expect (): void {
    this.#pending++
  }

  /** Resolves once the event is on the queue (or, after retries, in the error log). */
  async publish (event: UsageEvent): Promise<void> {
    if (this.#pending > 0 && --this.#pending === 0) for (const wake of this.#idle.splice(0)) wake()
    await this.#enqueue(event)
  }

  /**
   * Queues the event of a refused request (outcome `refused`, ErrorLogEnabled): no admitted
   * request waits for it, so it is not counted by expect()/drain(), and it is dropped while the
   * queue is not answering (the memory held for billable events is never spent on refusals) and
   * once the publisher is closing. Returns false when dropped.
   */
  publishRefusal (event: UsageEvent): boolean {
    if (this.#held > 0 || this.#closing) return false
    void this.#enqueue(event)
    return true
  }

  async #enqueue (event: UsageEvent): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#buffer.push({ event, done: resolve })
      if (this.#buffer.length >= this.#batching.max) this.#flush()
      else this.#timer ??= setTimeout(() => { this.#flush() }, this.#batching.waitMs)
    })
  }

  /** Sends what is buffered now and waits for every send in flight. */
  async flush (): Promise<void> {
    this.#flush()
    await Promise.all([...this.#sending])
  }

  #flush (): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const batch = this.#buffer
    this.#buffer = []
    if (batch.length === 0) return
    this.#sendingEvents += batch.length
    const sending = this.#send(batch.map((b) => b.event)).finally(() => {
      this.#sendingEvents -= batch.length
      this.#sending.delete(sending)
      for (const b of batch) b.done()
    })
    this.#sending.add(sending)
  }

  async #send (events: UsageEvent[]): Promise<void> {
    const data: UsageBatch = { events }
    let held = false
    // Attempts left once the publisher is closing (a held batch gets this many more, not forever).
    let lastTries = 5
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.queue.add(USAGE_BATCH_JOB, data, {
            jobId: `${events[0]!.request_id}+${events.length}`,
            // Transient failures (Postgres down) retry until they succeed, at most a minute apart;
            // malformed events fail at once (UnrecoverableError in the worker).
            attempts: Number.MAX_SAFE_INTEGER,
            backoff: { type: 'capped' },
            removeOnComplete: 1000,
            removeOnFail: false
          })
          usageEventsPublished.inc(events.length)
          return
        } catch (err) {
          // Redis away (REL-36): after 5 attempts the events stay in memory and are sent again
          // every 2 s until it is back, up to MAX_HELD_EVENTS of them; at shutdown they get 5
          // more attempts. Only then are they given up, each logged whole (nothing billable
          // disappears silently).
          if (attempt >= 5 && !held && !this.#closing && this.#held + events.length <= this.#maxHeld) {
            held = true
            this.#held += events.length
            this.#log.warn({ err, events: events.length, held: this.#held }, 'usage events held in memory until the queue answers again')
          }
          if (this.#closing && held) lastTries--
          if ((attempt >= 5 && !held) || lastTries <= 0) {
            usageEventsLost.inc(events.length)
            for (const event of events) this.#log.error({ err, usage_event: event }, 'usage event could not be queued')
            return
          }
          await new Promise((resolve) => setTimeout(resolve, Math.min(200 * attempt, 2_000)))
        }
      }
    } finally {
      if (held) this.#held -= events.length
    }
  }

  /** Waits for the event of every admitted request, then sends them all. */
  async drain (): Promise<void> {
    while (this.#pending > 0) await new Promise<void>((resolve) => this.#idle.push(resolve))
    await this.flush()
  }

  async close (): Promise<void> {
    this.#closing = true
    await this.drain()
    this.#untrack()
    await this.queue.close()
  }
}
