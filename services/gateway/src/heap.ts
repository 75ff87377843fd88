import { setFlagsFromString } from 'node:v8'

/**
 * Bounds how far V8 lets the old generation grow past what the last full collection kept.
 *
 * Under steady relay load a few KB of every request outlive two young-generation collections
 * (buffers and Redis/queue commands still in flight at that moment) and are promoted; they die
 * soon after, but V8's own policy lets the old generation grow to 2-4 times what the last full
 * collection kept before it collects again, so the gateway's RSS climbed 40 -> 130 MB of heap
 * between full collections at 4,000 requests a second (bench/, `--trace-gc`). A factor of
 * 1 + percent/100 collects sooner, on a heap that is mostly garbage by then, so the extra
 * marking is small. The flag is read at every full collection, so setting it at start works.
 * 0 keeps V8's policy.
 */
export function limitHeapGrowth (percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${Math.trunc(percent)}`)
}
