// `npm run bench`: starts the whole system on 127.0.0.1 with a fresh database, a mock upstream
// and a bare relay, seeds it through the console API, runs every scenario of issue 7 and writes
// bench/results/<date>.md and latest.json. `npm run bench -- --help` lists the options.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from '@modelgate/db'
import { billingGroup, logsGroup } from './data-groups.js'
import { chatBody, chatRequest, type Ctx, measure } from './measure.js'
import { benchOptions, type BenchOptions, type Group, GROUPS } from './options.js'
import { summarizeProfile } from './profile.js'
import { protocolsGroup } from './protocol-groups.js'
import { latencyGroup, relayGroup, routingGroup, slowGroup, streamGroup, streamLatencyGroup } from './relay-groups.js'
import { type BenchReport, type Machine, markdown, ratiosOf } from './report.js'
import { seed } from './seed.js'
import { type Stack, StackResources } from './stack.js'

const RUNNERS: Record<Group, (ctx: Ctx) => Promise<void>> = {
  relay: relayGroup,
  latency: latencyGroup,
  stream: streamGroup,
  'stream-latency': streamLatencyGroup,
  protocols: protocolsGroup,
  slow: slowGroup,
  routing: routingGroup,
  billing: billingGroup,
  logs: logsGroup
}

const log = (line: string) => process.stdout.write(`bench | ${line}\n`)
const benchDir = fileURLToPath(new URL('..', import.meta.url))
const resultsDir = join(benchDir, 'results')
const profileDir = join(resultsDir, 'profiles')

let opts: BenchOptions | undefined
try {
  opts = benchOptions(process.argv.slice(2))
} catch (err) {
  process.stderr.write(`npm run bench: ${(err as Error).message}\n`)
  process.exit(2)
}
if (opts === undefined) process.exit(0)
const options = opts

/** A full run measures every group at the default sizes; only such a run replaces latest.json. */
const full = options.groups.length === GROUPS.length && options.duration >= 10 && options.channels === 10_000 && options.logLevel === 'info' && options.node === '' && options.nodeFlags.length === 0 &&
  options.slowStreams === 5_000 && options.billingEvents === 100_000 && options.logRows === 10_000_000

mkdirSync(profileDir, { recursive: true })
const logDir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'))
const resources = new StackResources({
  postgresUrl: options.postgresUrl,
  redisUrl: options.redisUrl,
  profileExecArgv: options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  logLevel: options.logLevel,
  node: options.node,
  nodeFlags: options.nodeFlags,
  log
}, logDir)

let stopping = false
let stoppingSince = 0
function onSignal (signal: string): void {
  if (stopping) {
    // One Ctrl-C reaches us twice (from the terminal and forwarded by npm): only a later one forces.
    if (Date.now() - stoppingSince < 2_000) return
    log('forced stop')
    resources.children.killAll()
    process.exit(130)
  }
  stopping = true
  stoppingSince = Date.now()
  log(`${signal}: stopping the processes and dropping the database (again to force)`)
  void resources.release().finally(() => {
    rmSync(logDir, { recursive: true, force: true })
    process.exit(130)
  })
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => { onSignal(signal) })

function git (...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: benchDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return ''
  }
}

async function machine (stack: Stack): Promise<Machine> {
  const { rows } = await sql<{ v: string }>`select version() as v`.execute(stack.db)
  const redisInfo = await stack.redis.info('server')
  const commit = git('rev-parse', '--short', 'HEAD')
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    // The services' Node, which --node may have chosen.
    node: options.node === '' ? process.version : execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim(),
    postgres: /^PostgreSQL [\d.]+/.exec(rows[0]?.v ?? '')?.[0] ?? 'PostgreSQL',
    redis: /redis_version:([\d.]+)/.exec(redisInfo)?.[1] ?? 'unknown',
    commit: commit === '' ? 'unknown' : `${commit}${git('status', '--porcelain') === '' ? '' : ' with local changes'}`,
    loadBefore,
    loadAfter: Math.round(loadavg()[0]! * 10) / 10
  }
}

async function benchmark (ctx: Ctx): Promise<void> {
  const failures: string[] = []
  for (const group of options.groups) {
    if (stopping) return
    log(`== ${group}`)
    try {
      await RUNNERS[group](ctx)
    } catch (err) {
      if (stopping) return
      const message = (err as Error).message
      failures.push(`${group}: ${message}`)
      log(`group ${group} failed: ${(err as Error).stack ?? message}`)
      for (const name of ['gateway', 'control-plane', 'billing-worker']) {
        if (!resources.children.alive(name)) throw new Error(`${name} is no longer running; see ${logDir}/${name}.log`, { cause: err })
      }
    }
  }
  const date = new Date().toISOString().slice(0, 10)
  const { postgresUrl: _p, redisUrl: _r, ...shown } = options
  const report: BenchReport = {
    date,
    machine: await machine(ctx.stack),
    options: shown,
    full,
    scenarios: ctx.results,
    ratios: ratiosOf(ctx.results),
    targets: ctx.checks,
    failures
  }
  const md = markdown(report)
  let mdFile: string
  if (full) {
    mdFile = join(resultsDir, `${date}.md`)
    writeFileSync(join(resultsDir, 'latest.json'), JSON.stringify(report, null, 2) + '\n')
  } else {
    const dir = join(resultsDir, 'partial')
    mkdirSync(dir, { recursive: true })
    const stamp = new Date().toISOString().replace(/[:.]/g, '-')
    mdFile = join(dir, `${stamp}.md`)
    writeFileSync(join(dir, `${stamp}.json`), JSON.stringify(report, null, 2) + '\n')
  }
  writeFileSync(mdFile, md)
  process.stdout.write('\n' + md + '\n')
  log(`written ${mdFile}${full ? ' and bench/results/latest.json; `npm run summary -w @modelgate/bench` puts the summary into docs/performance.md' : ' (partial run: latest.json unchanged)'}`)
}

/** The gateway and the worker under --cpu-prof through the 50-connection non-stream load, then their profiles summarised. */
async function profile (ctx: Ctx): Promise<void> {
  const before = new Set(readdirSync(profileDir))
  const skipMs = performance.now() - resources.gatewaySpawnedAt
  await measure(ctx, {
    id: 'chat-gateway-50c-profiled',
    group: 'relay',
    title: 'non-stream chat, full gateway under --cpu-prof',
    via: 'gateway',
    load: '50 connections',
    job: { kind: 'connections', request: chatRequest(ctx, 'gateway', chatBody()), connections: 50, seconds: options.duration }
  })
  // Profiles are written when the processes exit; Node names them CPU.<date>.<time>.<pid>....
  await resources.stopProfiled()
  const written = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f))
  for (const [name, pid] of [['gateway', ctx.stack.gateway.pid], ['billing worker', ctx.stack.worker.pid]] as const) {
    const file = written.find((f) => f.split('.')[3] === String(pid))
    if (file === undefined) throw new Error(`the ${name} wrote no .cpuprofile into ${profileDir}`)
    const summary = summarizeProfile(join(profileDir, file), { skipMs })
    writeFileSync(join(profileDir, `${file}.txt`), summary + '\n')
    process.stdout.write(`\n${name}: ${summary}\n`)
    log(`${name} profile: ${join(profileDir, file)} (open it in Chrome DevTools or speedscope); summary beside it`)
  }
}

const loadBefore = Math.round(loadavg()[0]! * 10) / 10
let code = 0
let erred = false
try {
  log(`${options.profile ? 'profiling the gateway and the worker' : `groups: ${options.groups.join(', ')}`}; ${options.duration} s per scenario; service logs in ${logDir}`)
  if (loadBefore > cpus().length * 0.5) log(`warning: the machine is busy (load average ${loadBefore} on ${cpus().length} cores); the figures will be skewed`)
  const stack = await resources.start()
  const seeded = await seed(stack, log)
  const ctx: Ctx = { opts: options, stack, resources, seed: seeded, log, results: [], checks: [] }
  if (options.profile) await profile(ctx)
  else await benchmark(ctx)
  erred = ctx.results.some((r) => r.errors > 0)
} catch (err) {
  if (!stopping) {
    log(`failed: ${(err as Error).stack ?? String(err)}`)
    code = 1
  }
} finally {
  if (!stopping) {
    await resources.release()
    // Service logs explain failed requests: kept when something failed, removed otherwise.
    if (code === 0 && !erred) rmSync(logDir, { recursive: true, force: true })
    else log(`service logs kept in ${logDir}`)
  }
}
if (!stopping) process.exit(code)
