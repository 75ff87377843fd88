/**
 * The redemption limits of docs/domain.md, as @modelgate/contracts declares them.
 * Copied, not imported: a value import from the contracts bundles TypeBox into the console
 * (limits.test.ts keeps the copies equal).
 */
export const REDEMPTION_NAME_MAX = 20
export const REDEMPTION_BATCH_MAX = 100
export const DEFAULT_REDEMPTION_QUOTA = 100_000
