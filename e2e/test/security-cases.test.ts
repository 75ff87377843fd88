import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

/**
 * SECURITY.md lists the forty security and reliability cases with the test file that proves each.
 * This keeps that table and the tests in step: every case is listed once, its file holds a
 * top-level tap test named after it, and no test is named after a case the table does not list.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const IDS = [
  ...Array.from({ length: 32 }, (_, i) => `SEC-${String(i + 1).padStart(2, '0')}`),
  ...Array.from({ length: 8 }, (_, i) => `REL-${i + 33}`)
]

function testFiles (dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) testFiles(path, out)
    else if (entry.name.endsWith('.test.ts')) out.push(relative(root, path))
  }
  return out
}

/** Case ids named by top-level tests (`t.test('SEC-nn ...'`) in one file. */
function casesIn (file: string): Set<string> {
  const text = readFileSync(join(root, file), 'utf8')
  return new Set([...text.matchAll(/^t\.test\(['`"]((?:SEC|REL)-\d\d) /gm)].map((m) => m[1] ?? ''))
}

t.test('SECURITY.md names the test files of each case, and that file holds a top-level test named after the case', async (t) => {
  const table = new Map<string, string[]>()
  for (const m of readFileSync(join(root, 'SECURITY.md'), 'utf8').matchAll(/^\| ((?:SEC|REL)-\d\d) \|([^\n]*)\|$/gm)) {
    const id = m[1] ?? ''
    t.notOk(table.has(id), `${id} is listed once`)
    table.set(id, [...(m[2] ?? '').matchAll(/`([^`]+\.test\.ts)`/g)].map((f) => f[1] ?? ''))
  }
  t.same([...table.keys()].sort(), [...IDS].sort(), 'the table lists exactly the forty cases')
  for (const [id, files] of table) {
    t.ok(files.length > 0, `${id}: the table names its test file`)
    for (const file of files) t.ok(casesIn(file).has(id), `${id}: ${file} has a test named after it`)
  }

  const named = new Map<string, string[]>()
  for (const file of testFiles(root)) {
    for (const id of casesIn(file)) named.set(id, [...named.get(id) ?? [], file])
  }
  for (const [id, files] of named) {
    t.same(files.filter((f) => table.get(id)?.includes(f) !== true), [], `${id}: every file with a test named after it is in the table`)
  }
})
