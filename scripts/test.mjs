#!/usr/bin/env node
// `npm test`: lint, typecheck and every workspace's tests, packed onto a small machine.
//
// The build runs first (the tests start the built services). Then lint, typecheck and the tests
// run side by side. The test files of the large packages are dealt into shards, and the shards
// and small packages run in a few slots at a time, longest first, so that no package's files run
// one after another while a slot stands idle. Each line a test process prints is prefixed with its
// package (`@modelgate/<name>:test: `, as turbo does) so logs stay readable and searchable.
// scripts/test-times.json holds the seconds each test file took in a full run; files it does not
// know count as the median. Regenerate it with `node scripts/test.mjs --times <log of a run>`.
//
// Settings: TEST_SLOTS (test processes at once, default 3), TEST_ONLY (comma-separated package
// names, e.g. `gateway,e2e`, to run only those).
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { createInterface } from 'node:readline'

const root = join(import.meta.dirname, '..')
const timesFile = join(import.meta.dirname, 'test-times.json')

/** Shards per package: the packages whose files together take minutes. */
const SHARDS = { gateway: 2, e2e: 3, 'control-plane': 2 }

if (process.argv[2] === '--times') {
  writeTimes(process.argv[3])
  process.exit(0)
}
if (process.argv[2] === '--plan') {
  for (const unit of plan(undefined)) console.log(`${unit.seconds.toFixed(0).padStart(6)} s  ${unit.label}`)
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

/** Workspaces with a test script, by short name. */
function testPackages () {
  const out = []
  for (const group of ['packages', 'services', 'web', 'e2e']) {
    const dirs = group === 'web' || group === 'e2e' ? [root + '/' + group] : readdirSync(join(root, group)).map((d) => join(root, group, d))
    for (const dir of dirs) {
      const file = join(dir, 'package.json')
      if (!existsSync(file)) continue
      const pkg = JSON.parse(readFileSync(file, 'utf8'))
      if (pkg.scripts?.test === undefined) continue
      out.push({ name: pkg.name.replace('@modelgate/', ''), dir, exclude: pkg.tap?.exclude ?? [] })
    }
  }
  return out
}

function testFiles (dir, exclude, strict) {
  const found = []
  const walk = (sub) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = sub === '' ? entry.name : `${sub}/${entry.name}`
      if (entry.isDirectory()) {
        walk(path)
      } else if (/\.(ts|tsx|mts|cts|js|mjs|cjs|jsx)$/.test(entry.name) && !exclude.some((pattern) => matches(pattern, path))) {
        // tap runs every script under test/ that its exclude list leaves; a shard names its files,
        // so a file that tap would run must be one this scheduler recognises as a test.
        if (strict && !/\.test\.\w+$/.test(entry.name)) throw new Error(`${dir}/${path}: name test files *.test.ts, or add the helper to the package's tap.exclude`)
        found.push(path)
      }
    }
  }
  walk('test')
  return found.sort()
}

/** tap's exclude patterns as used here: plain paths and `dir/**`. */
function matches (pattern, path) {
  return pattern.endsWith('/**') ? path.startsWith(pattern.slice(0, -2)) : pattern === path
}

function readTimes () {
  try { return JSON.parse(readFileSync(timesFile, 'utf8')) } catch { return {} }
}

/** The units of work: a package's whole test run, or one shard of its files; longest first. */
function plan (only) {
  const times = readTimes()
  const known = Object.values(times).sort((a, b) => a - b)
  const median = known.length === 0 ? 10 : known[Math.floor(known.length / 2)]
  const units = []
  for (const pkg of testPackages()) {
    if (only !== undefined && !only.includes(pkg.name)) continue
    const files = testFiles(pkg.dir, pkg.exclude, (SHARDS[pkg.name] ?? 1) > 1).map((file) => ({ file, seconds: times[`${pkg.name}/${file}`] ?? median }))
    const shards = Math.min(SHARDS[pkg.name] ?? 1, files.length)
    if (shards <= 1) {
      units.push({ pkg, label: pkg.name, files: undefined, seconds: files.reduce((sum, f) => sum + f.seconds, 0) })
      continue
    }
    // Longest file first onto the shard with the least so far.
    const bins = Array.from({ length: shards }, (_, i) => ({ pkg, label: `${pkg.name} ${i + 1}/${shards}`, files: [], seconds: 0 }))
    for (const f of [...files].sort((a, b) => b.seconds - a.seconds)) {
      const bin = bins.reduce((least, b) => (b.seconds < least.seconds ? b : least))
      bin.files.push(f.file)
      bin.seconds += f.seconds
    }
    units.push(...bins)
  }
  return units.sort((a, b) => b.seconds - a.seconds)
}

async function runTests (only, slots) {
  const queue = plan(only)
  const worker = async () => {
    for (let unit = queue.shift(); unit !== undefined; unit = queue.shift()) {
      const args = ['tap', ...(unit.files ?? [])]
      await run(`@modelgate/${unit.pkg.name}:test`, 'npx', args, unit.pkg.dir)
      process.stdout.write(`test: ${unit.label} done at ${elapsed()}\n`)
    }
  }
  await Promise.all(Array.from({ length: slots }, worker))
}

/** scripts/test-times.json from a run's log: `@modelgate/<pkg>:test: ok N - test/x.test.ts # time=Ms`. */
function writeTimes (log) {
  const times = {}
  const line = /^@modelgate\/([a-z0-9-]+):test: (?:not )?ok \d+ - (test\/\S+\.test\.\w+) # time=([\d.]+)ms/
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
await Promise.all([
  npx(['turbo', 'run', 'build', '--output-logs=errors-only']),
  npx(['tap', 'build'], join(root, 'packages/pricing'))
])
if (failed.length > 0) {
  console.log(`npm test: the build failed: ${failed.join(', ')}`)
  process.exit(1)
}
console.log(`npm test: built in ${elapsed()}; lint, typecheck and tests (${slots} at a time)`)
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
