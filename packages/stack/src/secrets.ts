import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface Secrets { SESSION_SECRET: string, CRYPTO_SECRET: string }

/**
 * Secrets from the environment, else from `dataDir/secrets.json`, else new random ones saved
 * there (mode 600) so sessions and encrypted keys survive the next `npm start`.
 */
export async function resolveSecrets (dataDir: string, given: Partial<Secrets>): Promise<Secrets> {
  const file = join(dataDir, 'secrets.json')
  const saved: Partial<Secrets> = existsSync(file) ? JSON.parse(await readFile(file, 'utf8')) as Partial<Secrets> : {}
  const generated: Partial<Secrets> = {}
  const pick = (name: keyof Secrets): string => {
    const value = given[name] ?? saved[name]
    if (value !== undefined) return value
    generated[name] = randomBytes(32).toString('base64url')
    return generated[name]
  }
  const secrets: Secrets = { SESSION_SECRET: pick('SESSION_SECRET'), CRYPTO_SECRET: pick('CRYPTO_SECRET') }
  if (Object.keys(generated).length > 0) {
    await mkdir(dataDir, { recursive: true })
    await writeFile(file, JSON.stringify({ ...saved, ...generated }, null, 2) + '\n', { mode: 0o600 })
  }
  return secrets
}
