import type { Deps } from './deps.js'

/** How a provider's webhook event ids are kept: recorded once (true when new), forgotten again. */
export interface EventLedger {
  record: (id: string, type: string) => Promise<boolean>
  forget: (id: string) => Promise<void>
}

/**
 * Acts on a verified webhook event once by its id: providers deliver at least once, so an id
 * recorded before is acknowledged and skipped (logged). When acting fails the id is forgotten, so
 * the provider's retry is handled again once the cause is gone.
 */
export async function actOnce (deps: Deps<'log'>, provider: string, ledger: EventLedger, event: { id: string, type: string }, act: () => Promise<void>): Promise<void> {
  if (!await ledger.record(event.id, event.type)) {
    deps.log.info({ event: event.id, type: event.type }, `${provider} webhook: event seen before, skipped`)
    return
  }
  try {
    await act()
  } catch (err) {
    await ledger.forget(event.id)
    throw err
  }
}
