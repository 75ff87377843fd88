import type { Database, Kysely, SettledUser, SettlementInput } from '@modelgate/db'
import { settleUsage, settleUsageBatch } from '@modelgate/db'
import { settlementBatchDuration, settlementBatchEvents } from '../../metrics.js'

interface Pending {
  event: SettlementInput
  writeLog: boolean
  resolve: (user: SettledUser | undefined) => void
  reject: (err: unknown) => void
}

/**
 * Groups the events the worker is processing at the same moment into one transaction (up to
 * `max` events, waiting at most `waitMs` for more). If a batch fails, its events are settled one
 * by one, so a single bad event fails alone and the others go through.
 */
export class SettlementBatcher {
  readonly #db: Kysely<Database>
  readonly #max: number
  readonly #waitMs: number
  #pending: Pending[] = []
  #timer: NodeJS.Timeout | undefined

  constructor (db: Kysely<Database>, opts: { max: number, waitMs: number }) {
    this.#db = db
    this.#max = opts.max
    this.#waitMs = opts.waitMs
  }

  async settle (event: SettlementInput, writeLog: boolean): Promise<SettledUser | undefined> {
    return await new Promise((resolve, reject) => {
      this.#pending.push({ event, writeLog, resolve, reject })
      if (this.#pending.length >= this.#max) this.#flush()
      else this.#timer ??= setTimeout(() => this.#flush(), this.#waitMs)
    })
  }

  #flush (): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const batch = this.#pending
    this.#pending = []
    if (batch.length === 0) return
    void this.#run(batch)
  }

  async #run (batch: Pending[]): Promise<void> {
    // Events of one batch share the log switch; a change of the switch splits the batch.
    for (const writeLog of [true, false]) {
      const part = batch.filter((p) => p.writeLog === writeLog)
      if (part.length === 0) continue
      const began = performance.now()
      settlementBatchEvents.inc(part.length)
      try {
        const settled = await settleUsageBatch(this.#db, part.map((p) => p.event), { writeLog })
        settlementBatchDuration.observe((performance.now() - began) / 1000)
        for (const p of part) p.resolve(settled.get(p.event.request_id))
      } catch {
        await Promise.all(part.map(async (p) => {
          try {
            p.resolve(await settleUsage(this.#db, p.event, { writeLog }))
          } catch (err) {
            p.reject(err)
          }
        }))
      }
    }
  }
}
