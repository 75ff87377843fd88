// Trims a `turbo prune --docker` output (the json/ folder) down to what one service runs, before
// `npm ci --omit=dev` in the image's dependency stage. `turbo prune` follows devDependencies too
// (the gateway's tests pull in the control plane, the console and the test harness), and a
// workspace listed in the root package.json always gets its own dependencies installed, dev or
// not. So this keeps only the workspaces reachable from the service through `dependencies`,
// drops every devDependencies section, and empties the dependencies of asset-only workspaces
// (the console: its built files are served, its React/MUI libraries are never loaded).
//
//   node runtime-workspaces.mjs <dir> <@modelgate/service> [--assets <@modelgate/pkg>]...
//   node runtime-workspaces.mjs --copy-dist <build dir> <dir>
// The second form copies the built dist/ folder of every workspace <dir> kept from <build dir>.
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import process from 'node:process'

const read = (file) => JSON.parse(readFileSync(file, 'utf8'))
const write = (file, value) => writeFileSync(file, JSON.stringify(value, null, 2) + '\n')

if (process.argv[2] === '--copy-dist') {
  const [from, to] = process.argv.slice(3)
  for (const ws of read(join(to, 'package.json')).workspaces) {
    if (!existsSync(join(from, ws, 'dist'))) throw new Error(`${ws} was not built: ${join(from, ws, 'dist')} is missing`)
    cpSync(join(from, ws, 'dist'), join(to, ws, 'dist'), { recursive: true })
  }
  process.exit(0)
}

const [dir, service, ...rest] = process.argv.slice(2)
if (dir === undefined || service === undefined) {
  process.stderr.write('usage: runtime-workspaces.mjs <dir> <service package> [--assets <package>]...\n')
  process.exit(2)
}
const assets = new Set(rest.filter((_, i) => rest[i - 1] === '--assets'))

const root = read(join(dir, 'package.json'))
if (!Array.isArray(root.workspaces) || root.workspaces.some((w) => w.includes('*'))) {
  throw new Error('expected the explicit workspace list written by `turbo prune`')
}
const byName = new Map(root.workspaces.map((ws) => [read(join(dir, ws, 'package.json')).name, ws]))
if (!byName.has(service)) throw new Error(`${service} is not a workspace of ${dir}`)

const keep = new Set([service])
for (const name of keep) {
  const pkg = read(join(dir, byName.get(name), 'package.json'))
  if (assets.has(name)) continue
  for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
    if (byName.has(dep)) keep.add(dep)
  }
}

for (const [name, ws] of byName) {
  const file = join(dir, ws, 'package.json')
  if (!keep.has(name)) {
    rmSync(join(dir, ws), { recursive: true, force: true })
    continue
  }
  const pkg = read(file)
  delete pkg.devDependencies
  if (assets.has(name)) {
    delete pkg.dependencies
    delete pkg.optionalDependencies
    delete pkg.peerDependencies
  }
  write(file, pkg)
}
root.workspaces = root.workspaces.filter((ws) => [...keep].some((name) => byName.get(name) === ws))
delete root.devDependencies
write(join(dir, 'package.json'), root)
process.stdout.write(`runtime workspaces of ${service}: ${[...keep].sort().join(', ')}\n`)
