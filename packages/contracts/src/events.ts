import Type, { type Static } from 'typebox'

/**
 * Redis pub/sub channel on which the control plane announces configuration changes; gateways
 * and control-plane replicas drop their caches when a message arrives (ARCHITECTURE.md invariant 4).
 * Pub/sub channels do not take ioredis' keyPrefix, so the prefix is part of the name.
 */
export function configChannel (keyPrefix: string): string {
  return `${keyPrefix}config:changed`
}

/** What changed. `options` carries the changed keys; `user` and `token` the ids. */
export const ConfigChange = Type.Union([
  Type.Object({ kind: Type.Literal('options'), keys: Type.Array(Type.String()) }),
  Type.Object({ kind: Type.Literal('user'), id: Type.Integer() }),
  Type.Object({ kind: Type.Literal('token'), id: Type.Integer() }),
  Type.Object({ kind: Type.Literal('channel'), id: Type.Optional(Type.Integer()) }),
  /** The super admin's sign-in providers (the public list in /api/status). */
  Type.Object({ kind: Type.Literal('oauth_providers') })
])
export type ConfigChange = Static<typeof ConfigChange>

/** Redis key of a gateway's cached token-and-owner record (deleted by the control plane on change). */
export function tokenCacheKey (keyHash: string): string {
  return `cache:token:${keyHash}`
}

/** Redis key marking a console session (by its token id) as logged out until it would expire. */
export function revokedSessionKey (jti: string): string {
  return `session:revoked:${jti}`
}
