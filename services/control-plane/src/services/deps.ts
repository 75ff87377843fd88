import type { ConfigChange, OptionValues } from '@modelgate/contracts'
import type { Database, Kysely, User } from '@modelgate/db'
import type { Outbound } from '@modelgate/providers'
import type { QuotaStore } from '@modelgate/quota'
import type { SecretBox } from '@modelgate/service'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import type { AuthContext } from '../plugins/app/auth.js'

/**
 * What the console's services work with: the app's decorators, passed by the routes
 * (`{ db: app.db, redis: app.redis }`). Each service takes only the part it uses, as
 * `Deps<'db' | 'secrets'>`, never the Fastify instance.
 */
export interface ServiceDeps {
  db: Kysely<Database>
  redis: Redis
  log: FastifyBaseLogger
  /** Seals and opens secrets at rest (token keys, channel keys) under CRYPTO_SECRET. */
  secrets: SecretBox
  /** The outbound guard (SSRF policy) every upstream call goes through. */
  outbound: Outbound
  /** Cached balances the gateways spend from. */
  quota: QuotaStore
  /** Announces a configuration change to every gateway and control-plane replica. */
  publishChange: (change: ConfigChange) => Promise<void>
  /** Current options (stored values over defaults). */
  loadOptions: () => Promise<OptionValues>
  /** Signs the user in on this response (sets the session cookie). */
  startSession: (req: FastifyRequest, reply: FastifyReply, user: User) => Promise<void>
  /** Signs the request's session again under `user`'s current session version. */
  renewSession: (req: FastifyRequest, reply: FastifyReply, user: User) => Promise<void>
  /** The caller when signed in, else null. */
  optionalAuth: (req: FastifyRequest) => Promise<AuthContext | null>
}

/** The part of {@link ServiceDeps} a service uses. */
export type Deps<K extends keyof ServiceDeps> = Pick<ServiceDeps, K>
