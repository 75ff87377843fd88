import { readFileSync } from 'node:fs'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
interface CpuProfile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

/** Where a script belongs: an npm package, one of our workspaces, Node itself, or V8. */
function areaOf (url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (pkg !== null) return pkg[1]!
  const ours = /\/(packages|services)\/([^/]+)\//.exec(url)
  if (ours !== null) return `@modelgate/${ours[2]!}`
  if (url.startsWith('node:')) return 'node (internal)'
  return url
}

function shortUrl (url: string): string {
  return url.replace(/^file:\/\/.*?\/node_modules\//, '').replace(/^file:\/\/.*?\/(packages|services)\//, '$1/')
}

const label = (f: CallFrame) => `${f.functionName || '(anonymous)'}${f.url === '' ? '' : `  ${shortUrl(f.url)}:${f.lineNumber + 1}`}`
const isInternal = (f: CallFrame) => f.url === '' || f.url.startsWith('node:') || f.url.startsWith('wasm://')

/**
 * Self time of a V8 .cpuprofile aggregated by function (name + script + line) and by package,
 * highest first; idle time is left out of the percentages. Native frames (writev, JSON.parse,
 * ...) are named with their nearest JavaScript caller, and native and Node-internal frames are
 * charged to the package that called into them, so the package table says whose work it was.
 * Samples of the first `skipMs` (process start, seeding) are left out.
 */
export function summarizeProfile (path: string, opts: { top?: number, skipMs?: number } = {}): string {
  const top = opts.top ?? 30
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const nearest = (id: number, accept: (f: CallFrame) => boolean): CallFrame | undefined => {
    for (let p = parent.get(id); p !== undefined; p = parent.get(p)) {
      const f = byId.get(p)?.callFrame
      if (f !== undefined && accept(f)) return f
    }
    return undefined
  }
  const self = new Map<number, number>()
  let elapsed = 0
  // timeDeltas[i + 1] is the time from sample i to the next one: sample i's duration.
  for (let i = 0; i < profile.samples.length; i++) {
    elapsed += profile.timeDeltas[i] ?? 0
    if (elapsed < (opts.skipMs ?? 0) * 1000) continue
    const id = profile.samples[i]!
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0))
  }
  const byFunction = new Map<string, number>()
  const byArea = new Map<string, number>()
  let total = 0
  let idle = 0
  for (const [id, us] of self) {
    const f = byId.get(id)?.callFrame
    if (f === undefined) continue
    if (f.functionName === '(idle)') {
      idle += us
      continue
    }
    total += us
    const vmState = f.url === '' && f.functionName.startsWith('(')
    const jsCaller = f.url === '' && !vmState ? nearest(id, (c) => c.url !== '') : undefined
    const key = jsCaller === undefined ? label(f) : `${label(f)}  <- ${label(jsCaller)}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + us)
    const owner = isInternal(f) && !vmState ? nearest(id, (c) => !isInternal(c)) ?? f : f
    const area = areaOf(owner.url, owner.functionName)
    byArea.set(area, (byArea.get(area) ?? 0) + us)
  }
  const rows = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, us]) => `${(us / 1000).toFixed(0).padStart(8)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
  return [
    `${path}`,
    `busy ${(total / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s${opts.skipMs === undefined ? '' : ` (after the first ${(opts.skipMs / 1000).toFixed(1)} s: start and seeding left out)`}`,
    '',
    'self time by package (native and Node-internal frames charged to the package that called them):',
    ...rows(byArea, 15),
    '',
    `top ${top} functions by self time:`,
    ...rows(byFunction, top)
  ].join('\n')
}
