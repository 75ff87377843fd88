import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { NativeProtocol } from '../kit.js'

/** Every native fixture in this folder (`<type>-<name>.ts`), by channel type. */
export async function nativeFixtures (): Promise<Record<number, NativeProtocol>> {
  const fixtures: Record<number, NativeProtocol> = {}
  for (const file of readdirSync(fileURLToPath(new URL('.', import.meta.url)))) {
    const match = /^(\d+)-[\w-]+\.ts$/.exec(file)
    if (match === null) continue
    const loaded = await import(`./${file.replace(/\.ts$/, '.js')}`) as { fixture?: NativeProtocol }
    if (loaded.fixture === undefined) throw new Error(`${file} exports no fixture`)
    fixtures[Number(match[1])] = loaded.fixture
  }
  return fixtures
}
