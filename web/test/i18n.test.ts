import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { en } from '../src/i18n/en.js'
import { zh } from '../src/i18n/zh.js'

const SRC = join(import.meta.dirname, '..', 'src')

function files (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : /\.(ts|tsx)$/.test(name) ? [path] : []
  })
}

/** Every leaf key of a catalogue, dotted. */
function keys (obj: object, prefix = ''): string[] {
  return Object.entries(obj).flatMap(([k, v]) => typeof v === 'string' ? [`${prefix}${k}`] : keys(v as object, `${prefix}${k}.`))
}

t.test('every message exists in English and Chinese, and every key the code uses exists', async (t) => {
  const catalogues: Array<{ name: string, en: object, zh: object }> = []
  for (const path of files(join(SRC, 'resources')).filter((p) => p.endsWith('/i18n.ts'))) {
    catalogues.push((await import(path) as { default: { name: string, en: object, zh: object } }).default)
  }
  t.ok(catalogues.length > 0, 'screen catalogues found')
  const all = { en: { ...en } as Record<string, unknown>, zh: { ...zh } as Record<string, unknown> }
  for (const c of catalogues) {
    t.notOk(c.name in all.en, `catalogue name ${c.name} is unique`)
    all.en[c.name] = c.en
    all.zh[c.name] = c.zh
  }
  const enKeys = new Set(keys(all.en))
  const zhKeys = new Set(keys(all.zh))
  t.same([...enKeys].filter((k) => !zhKeys.has(k)), [], 'no English key lacks a Chinese message')
  t.same([...zhKeys].filter((k) => !enKeys.has(k)), [], 'no Chinese key lacks an English message')
  const empty = [...keys(all.zh)].filter((k) => k.split('.').reduce<unknown>((o, p) => (o as Record<string, unknown>)[p], all.zh) === '')
  t.same(empty, [], 'no empty Chinese message')

  // Literal keys in t('...') / i18nKey="..." calls; dynamic keys must be listed in catalogues by construction.
  const used = new Set<string>()
  for (const path of files(SRC)) {
    const text = readFileSync(path, 'utf8')
    for (const m of text.matchAll(/\bt\(\s*'([a-zA-Z0-9_]+(?:\.[a-zA-Z0-9_]+)+)'/g)) used.add(m[1]!)
  }
  t.ok(used.size > 10, 'the scan found the keys the code uses')
  t.same([...used].filter((k) => !enKeys.has(k)).sort(), [], 'every key used in the code exists')
})
