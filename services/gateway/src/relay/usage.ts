import { USAGE_QUEUE, type UsageEvent } from '@modelgate/contracts'
import { Queue } from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'

/**
 * Puts one usage event per admitted request on the `usage` queue. The job id is the request id,
 * so publishing twice cannot create two settlements. A failed publish is retried, then logged
 * with the whole event (it carries no secret) so nothing billable disappears silently.
 */
export class UsagePublisher {
  readonly queue: Queue
  readonly #log: FastifyBaseLogger

  constructor (connection: object, prefix: string, log: FastifyBaseLogger) {
    this.queue = new Queue(USAGE_QUEUE, { connection, prefix })
    this.#log = log
  }

  async publish (event: UsageEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.queue.add('settle', event, {
          jobId: event.request_id,
          // Transient failures (Postgres down) retry until they succeed, at most a minute apart;
          // a malformed event fails at once (UnrecoverableError in the worker).
          attempts: Number.MAX_SAFE_INTEGER,
          backoff: { type: 'capped' },
          removeOnComplete: 10_000,
          removeOnFail: false
        })
        return
      } catch (err) {
        if (attempt >= 5) {
          this.#log.error({ err, usage_event: event }, 'usage event could not be queued')
          return
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt))
      }
    }
  }

  async close (): Promise<void> {
    await this.queue.close()
  }
}
