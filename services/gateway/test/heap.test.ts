import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { SERVICE_NODE_FLAGS } from '@modelgate/config'
import t from 'tap'

const heapModule = fileURLToPath(new URL('../src/heap.ts', import.meta.url))

// A process holding 20 MB for good while churning objects that outlive young-generation
// collections and then die (as a busy gateway's in-flight requests do): its peak heap with the
// growth limit applied at start, as the gateway's server does.
const workload = `
import { limitHeapGrowth } from ${JSON.stringify(heapModule)}
limitHeapGrowth(Number(process.argv[1]))
const live = []
for (let i = 0; i < 2e5; i++) live.push({ a: i, s: 'y' + i })
let middleAged = []
let peak = 0
for (let i = 0; i < 1e7; i++) {
  middleAged.push({ a: i, b: 'x' + i })
  if (middleAged.length > 200000) middleAged = []
  if (i % 50000 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal)
}
process.stdout.write(String(live.length > 0 ? peak : 0))
`

async function peakHeap (percent: number): Promise<number> {
  // With the services' Node flags, as the gateway runs.
  const { stdout } = await promisify(execFile)(process.execPath, [...SERVICE_NODE_FLAGS, '--import', 'tsx', '--input-type=module', '-e', workload, String(percent)])
  return Number(stdout)
}

t.test('HEAP_GROWTH_PERCENT bounds how far the heap grows between full collections', async (t) => {
  const [v8Policy, limited] = await Promise.all([peakHeap(0), peakHeap(20)])
  t.ok(limited < v8Policy * 0.8, `peak heap ${Math.round(limited / 1e6)} MB with 20%, ${Math.round(v8Policy / 1e6)} MB with V8's own policy`)
})
