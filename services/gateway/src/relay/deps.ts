import type { Database, Kysely } from '@modelgate/db'
import type { Outbound } from '@modelgate/providers'
import type { QuotaStore } from '@modelgate/quota'
import type { CallerCache } from './callers.js'
import type { RelayState } from './state.js'
import type { UpstreamResponse } from './upstream.js'
import type { UsagePublisher } from './usage.js'

/** What the relay's services (pipeline, realtime sessions, task submissions) work with. */
export interface RelayDeps {
  state: RelayState
  quota: QuotaStore
  usage: UsagePublisher
  db: Kysely<Database>
  /** UPSTREAM_TIMEOUT_MS: the longest wait for an upstream's headers, and between two chunks of its body. */
  upstreamTimeoutMs: number
  /** UPSTREAM_FIRST_BYTE_TIMEOUT_MS: the longest wait from sending a streamed request to its body's first byte. */
  upstreamFirstByteTimeoutMs: number
  /** The outbound guard: every upstream connection goes through its pools. */
  outbound: Outbound
  publishChannelChange: (id: number) => Promise<void>
  /** Upstream calls in progress, cut at the drain deadline of a shutdown; none when absent. */
  inFlight?: InFlightCalls
}

/** What the relay routes need besides: the caller cache, which authenticates relay keys. */
export interface RouteDeps extends RelayDeps {
  callers: CallerCache
}

/**
 * The upstream calls in progress in this process. At shutdown the gateway lets them finish for
 * DRAIN_TIMEOUT_MS, then cuts those still running (cutAll): a stream ends with an error event
 * and is billed for what was sent, and calls started afterwards are cut at once.
 */
export class InFlightCalls {
  readonly #calls = new Set<UpstreamResponse>()
  #cut: Error | undefined

  add (res: UpstreamResponse): void {
    if (this.#cut !== undefined) res.abort(this.#cut)
    else this.#calls.add(res)
  }

  delete (res: UpstreamResponse): void {
    this.#calls.delete(res)
  }

  get size (): number {
    return this.#calls.size
  }

  cutAll (reason: Error): void {
    this.#cut = reason
    for (const res of this.#calls) res.abort(reason)
    this.#calls.clear()
  }
}
