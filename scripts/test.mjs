#!/usr/bin/env node
// `npm test`: lint, typecheck and every workspace's tests, packed onto a small machine.
//
// The build runs first (the tests start the built services). Then lint, typecheck and the tests
// run side by side. Every test file is a tap script run on its own as `node --import tsx <file>`,
// a few at a time, longest first (so no slot stands idle at the end while one long file runs on).
// Running the files directly rather than through tap's runner saves a few seconds of CPU per file
// and per process a test spawns: the runner loads TypeScript through ts-node and adds its process
// tracker to every node process below it (NODE_OPTIONS), which cost more CPU than many tests.
// A file's output is printed when it ends, in one piece, each line prefixed with its package
// (`@modelgate/<name>:test: `, as turbo does) and indented, followed by the line tap's runner would
// write (`ok N - test/x.test.ts # time=Ms`), so logs stay readable and searchable.
// A file gets its package's tap timeout (`tap.timeout` in its package.json, else 120 s).
// scripts/test-times.json holds the seconds each test file took in a full run; files it does not
// know count as the median. Regenerate it with `node scripts/test.mjs --times <log of a run>`.
//
// Settings: TEST_SLOTS (test files at once, default 3), TEST_ONLY (comma-separated package names,
// e.g. `gateway,e2e`, to run only those). `npx tap` in a package still runs its tests through tap.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { clearTimeout, setTimeout } from 'node:timers'

const root = join(import.meta.dirname, '..')
const timesFile = join(import.meta.dirname, 'test-times.json')
const SCRIPT = /\.(ts|tsx|mts|cts|js|mjs|cjs|jsx)$/
// As tap's default exclude (fixtures, dist, node_modules), and what tests write.
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined
const CPU_MARK = '# test-cpu-seconds: '
const SKIP_DIRS = new Set(['node_modules', 'dist', 'fixture', 'fixtures', 'coverage', 'screenshots'])

if (process.argv[2] === '--times') {
  writeTimes(process.argv[3])
  process.exit(0)
}
if (process.argv[2] === '--plan') {
  for (const unit of plan(undefined)) console.log(`${unit.seconds.toFixed(1).padStart(7)} s  ${unit.pkg.name}/${unit.file}`)
  process.exit(0)
}

const failed = []
const started = Date.now()
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`

/** Runs a command with each output line prefixed; resolves to its exit code. */
function run (label, command, args, cwd, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => { process.stdout.write(label === '' ? `${line}\n` : `${label}: ${line}\n`) })
    }
    child.on('close', (code, signal) => {
      const status = code ?? (signal === null ? 1 : 128)
      if (status !== 0) failed.push(`${label || [command, ...args].join(' ')} (exit ${status}${signal === null ? '' : `, ${signal}`})`)
      resolve(status)
    })
  })
}

const npx = (args, cwd = root, env) => run('', 'npx', args, cwd, env)
/** Lint and typecheck yield the CPU to the tests, which have timing bounds; they fill idle time. */
const background = (args) => existsSync('/usr/bin/nice') ? run('', '/usr/bin/nice', ['-n', '10', 'npx', ...args], root) : npx(args)

/** Workspaces with a test script, by short name, with their tap settings. */
function testPackages () {
  const out = []
  for (const group of ['packages', 'services', 'web', 'e2e']) {
    const dirs = group === 'web' || group === 'e2e' ? [root + '/' + group] : readdirSync(join(root, group)).map((d) => join(root, group, d))
    for (const dir of dirs) {
      const file = join(dir, 'package.json')
      if (!existsSync(file)) continue
      const pkg = JSON.parse(readFileSync(file, 'utf8'))
      if (pkg.scripts?.test === undefined) continue
      out.push({ name: pkg.name.replace('@modelgate/', ''), dir, exclude: pkg.tap?.exclude ?? [], timeout: pkg.tap?.timeout ?? 120 })
    }
  }
  return out
}

/**
 * The files tap would run in `dir`: scripts under a `test/` folder and `*.test.*` / `*.spec.*`
 * scripts anywhere, less the package's tap.exclude. A script under test/ that is not named as a
 * test must be excluded (a helper), or it would run as one.
 */
function testFiles (dir, exclude) {
  const found = []
  const walk = (sub, inTest) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = sub === '' ? entry.name : `${sub}/${entry.name}`
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(path, inTest || /^(__)?tests?(__)?$/.test(entry.name))
        continue
      }
      if (!SCRIPT.test(entry.name) || entry.name.endsWith('.d.ts') || exclude.some((pattern) => matches(pattern, path))) continue
      const named = /\.(test|spec)\.\w+$/.test(entry.name)
      if (inTest && !named) throw new Error(`${dir}/${path}: name test files *.test.ts, or add the helper to the package's tap.exclude`)
      if (named) found.push(path)
    }
  }
  walk('', false)
  return found.sort()
}

/** tap's exclude patterns as used here: plain paths and `dir/**`. */
function matches (pattern, path) {
  return pattern.endsWith('/**') ? path.startsWith(pattern.slice(0, -2)) : pattern === path
}

function readTimes () {
  try { return JSON.parse(readFileSync(timesFile, 'utf8')) } catch { return {} }
}

/** Every test file with its expected seconds, longest first. */
function plan (only) {
  const times = readTimes()
  const known = Object.values(times).sort((a, b) => a - b)
  const median = known.length === 0 ? 10 : known[Math.floor(known.length / 2)]
  const units = []
  for (const pkg of testPackages()) {
    if (only !== undefined && !only.includes(pkg.name)) continue
    for (const file of testFiles(pkg.dir, pkg.exclude)) units.push({ pkg, file, seconds: times[`${pkg.name}/${file}`] ?? median })
  }
  return units.sort((a, b) => b.seconds - a.seconds)
}

/**
 * Runs one test file as tap would (its own process, TypeScript through tsx, the package's
 * timeout) and prints its output in one piece. Resolves to whether it passed.
 */
function runFile (unit, index, env = {}) {
  const { pkg, file } = unit
  const label = `@modelgate/${pkg.name}:test:`
  return new Promise((resolve) => {
    const begun = performance.now()
    // GNU time, where there is one, reports the CPU the file used with all it started (browsers,
    // services): the figure to look at when the suite slows down.
    const command = TIME === undefined ? [process.execPath] : [TIME, '-q', '-f', `${CPU_MARK}%U %S`, process.execPath]
    const child = spawn(command[0], [...command.slice(1), '--import', 'tsx', file], {
      cwd: pkg.dir,
      // tap's root test ends the file at TAP_TIMEOUT with a report of what was still running.
      env: { ...process.env, TAP_TIMEOUT: String(pkg.timeout), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true
    })
    running.add(child.pid)
    const lines = []
    let cpu
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        if (line.startsWith(CPU_MARK)) cpu = line.slice(CPU_MARK.length).split(' ').reduce((sum, n) => sum + Number(n), 0)
        else lines.push(line)
      })
    }
    // A file that does not end after its own timeout (a hung teardown) is killed with what it started.
    let killed = false
    const guard = setTimeout(() => {
      killed = true
      try { process.kill(-child.pid, 'SIGKILL') } catch { /* already gone */ }
    }, (pkg.timeout + 60) * 1000)
    child.on('close', (code, signal) => {
      running.delete(child.pid)
      clearTimeout(guard)
      const ms = performance.now() - begun
      const ok = code === 0 && !killed
      const out = lines.map((line) => `${label}     ${line}`.trimEnd())
      if (killed) out.push(`${label}     # killed: still running ${pkg.timeout + 60} s after it started`)
      out.push(`${label} ${ok ? 'ok' : 'not ok'} ${index} - ${file} # time=${ms.toFixed(3)}ms${cpu === undefined ? '' : ` cpu=${cpu.toFixed(1)}s`}${ok ? '' : ` (exit ${code ?? signal})`}`)
      process.stdout.write(out.join('\n') + '\n')
      if (!ok) failed.push(`${pkg.name}/${file} (exit ${code ?? signal}${killed ? ', killed' : ''})`)
      resolve(ok)
    })
  })
}

/** The process groups of the test files running (each file runs detached, in a group of its own). */
const running = new Set()
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const pid of running) { try { process.kill(-pid, 'SIGKILL') } catch { /* already gone */ } }
    process.exit(130)
  })
}

/**
 * Test databases on the shared Postgres are dropped here rather than by each test's teardown:
 * each file's databases carry its tag (MODELGATE_TEST_DB_TAG, see packages/testing) and are
 * dropped once the file has ended, a batch at a time, so that the checkpoint Postgres forces on
 * every DROP DATABASE is shared by the batch instead of paid once per test.
 */
async function databaseDropper () {
  let testing
  let adminUrl
  try {
    testing = await import('@modelgate/testing')
    adminUrl = await testing.sharedTestPostgres()
  } catch {
    adminUrl = undefined
  }
  if (adminUrl === undefined) return { tagOf: () => undefined, ended: () => {}, finish: async () => {} }
  const run = Date.now().toString(36)
  const ended = []
  let dropping = Promise.resolve()
  let dropped = 0
  const drop = (tags) => {
    dropping = dropping.then(async () => { dropped += await testing.dropTaggedTestDatabases(adminUrl, tags) })
      .catch((err) => { process.stdout.write(`test: dropping test databases failed: ${err.message}\n`) })
  }
  return {
    tagOf: (index) => `${run}x${index}`,
    ended: (tag) => {
      ended.push(tag)
      if (ended.length >= 8) drop(ended.splice(0))
    },
    finish: async () => {
      drop(ended.splice(0))
      await dropping
      process.stdout.write(`test: ${dropped} test databases dropped\n`)
    }
  }
}

async function runTests (only, slots) {
  const queue = plan(only)
  const total = queue.length
  const databases = await databaseDropper()
  let done = 0
  const worker = async () => {
    for (let unit = queue.shift(); unit !== undefined; unit = queue.shift()) {
      const index = total - queue.length
      const tag = databases.tagOf(index)
      await runFile(unit, index, tag === undefined ? {} : { MODELGATE_TEST_DB_TAG: tag })
      if (tag !== undefined) databases.ended(tag)
      done++
      if (done % 10 === 0 || done === total) process.stdout.write(`test: ${done}/${total} files done at ${elapsed()}\n`)
    }
  }
  await Promise.all(Array.from({ length: slots }, worker))
  await databases.finish()
}

/** scripts/test-times.json from a run's log: `@modelgate/<pkg>:test: ok N - test/x.test.ts # time=Ms`. */
function writeTimes (log) {
  const times = {}
  const line = /^@modelgate\/([a-z0-9-]+):test: (?:not )?ok \d+ - (\S+\.(?:test|spec)\.\w+) # time=([\d.]+)ms/
  for (const text of readFileSync(log, 'utf8').split('\n')) {
    const m = line.exec(text)
    if (m !== null) times[`${m[1]}/${m[2]}`] = Math.round(Number(m[3]) / 100) / 10
  }
  const sorted = Object.fromEntries(Object.entries(times).sort(([a], [b]) => a.localeCompare(b)))
  writeFileSync(timesFile, JSON.stringify(sorted, null, 2) + '\n')
  console.log(`${relative(root, timesFile)}: ${Object.keys(sorted).length} files`)
}

const only = process.env.TEST_ONLY?.split(',').map((s) => s.trim()).filter((s) => s !== '')
const slots = Math.max(1, Number(process.env.TEST_SLOTS ?? 3) || 3)

// The build, and tap's own plugin build once (parallel first runs of tap would race to write it).
// The TypeScript packages emit without type-checking (`tsc --noCheck`, through their build
// scripts' TSC_BUILD_FLAGS): the typecheck step below checks every workspace, sources and tests,
// and checking the sources twice was most of the build.
await Promise.all([
  npx(['turbo', 'run', 'build', '--output-logs=errors-only'], root, { TSC_BUILD_FLAGS: '--noCheck' }),
  npx(['tap', 'build'], join(root, 'packages/pricing'))
])
if (failed.length > 0) {
  console.log(`npm test: the build failed: ${failed.join(', ')}`)
  process.exit(1)
}
console.log(`npm test: built in ${elapsed()}; lint, typecheck and tests (${slots} files at a time)`)
await Promise.all([
  only === undefined ? background(['eslint', '.']) : Promise.resolve(0),
  only === undefined ? background(['turbo', 'run', 'typecheck', '--only', '--continue', '--concurrency=2', '--output-logs=errors-only']) : Promise.resolve(0),
  runTests(only, slots)
])
console.log(`npm test: ${failed.length === 0 ? 'passed' : 'FAILED'} in ${elapsed()}`)
if (failed.length > 0) {
  console.log('failed:')
  for (const f of failed) console.log(`  ${f}`)
  process.exit(1)
}
