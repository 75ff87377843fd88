import type { CredentialStore } from '@modelgate/providers'
import { redisCredentialStore } from '@modelgate/service'
import type { Deps } from '../deps.js'

export type CredentialDeps = Deps<'db' | 'redis' | 'secrets' | 'publishChange' | 'log'>

// One store per app, found by its Redis client.
const credentialStores = new WeakMap<CredentialDeps['redis'], CredentialStore>()

/**
 * Where tests and model lists share OAuth renewals (Claude Code, Codex) with the gateways: the
 * provider takes each refresh token once, so a renewal made here must reach them (Redis, and the
 * channel row written back).
 */
export function credentialStore (deps: CredentialDeps): CredentialStore {
  let store = credentialStores.get(deps.redis)
  if (store === undefined) credentialStores.set(deps.redis, store = redisCredentialStore({ redis: deps.redis, db: deps.db, box: deps.secrets, publish: deps.publishChange, log: deps.log }))
  return store
}
