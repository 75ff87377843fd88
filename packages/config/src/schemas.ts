import Type, { type Static } from 'typebox'

const port = (fallback: number, what: string) =>
  Type.Integer({ minimum: 1, maximum: 65535, default: fallback, description: `must be a TCP port 1-65535 (${what})` })

const databaseUrl = Type.String({
  pattern: '^postgres(ql)?://[^\\s]+$',
  description: 'must be a postgres:// connection URL'
})
const redisUrl = Type.String({
  pattern: '^rediss?://[^\\s]+$',
  description: 'must be a redis:// or rediss:// URL'
})
/** A service's Redis: one server, or a master found through Sentinel (see @modelgate/service's redisOptions). */
const serviceRedisUrl = Type.String({
  pattern: '^(rediss?|redis\\+sentinel)://[^\\s]+$',
  description: 'must be a redis://, rediss:// or redis+sentinel://[user:password@]host:port[,host:port...]/master-name[/db] URL (Redis Cluster is not supported)'
})
/** A trusted-proxy list: a hop count alone, or addresses and names (no numbers among them). */
const trustProxy = (fallback: string, what: string) => Type.String({
  default: fallback,
  pattern: '^(\\d+|([^\\s,]*[^\\s,\\d][^\\s,]*)?(,\\s*([^\\s,]*[^\\s,\\d][^\\s,]*)?)*)$',
  description: `must be a hop count, or addresses, CIDRs or loopback/linklocal/uniquelocal, comma-separated (${what})`
})
const logLevel = Type.Union(
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
  { default: 'info' }
)
const host = Type.String({ minLength: 1, default: '0.0.0.0', description: 'must be an interface address' })
const secret = (purpose: string) =>
  Type.String({ minLength: 32, secret: true, description: `must be at least 32 characters (${purpose})` })
const bool = (fallback: boolean, what: string) =>
  Type.Boolean({ default: fallback, description: `must be true or false (${what})` })
const httpUrl = (fallback: string, what: string) =>
  Type.String({ pattern: '^https?://[^\\s]+$', default: fallback, description: `must be an http(s):// URL (${what})` })
const redisPrefix = Type.String({ default: '', pattern: '^[A-Za-z0-9:_-]*$', description: 'must contain only letters, digits, ":", "_" and "-"' })
const shutdownGrace = Type.Integer({ minimum: 0, maximum: 600_000, default: 30_000, description: 'must be milliseconds 0-600000' })
const metricsPort = (fallback: number) =>
  Type.Integer({ minimum: 0, maximum: 65535, default: fallback, description: 'must be a TCP port 0-65535 (separate listener answering GET /metrics in Prometheus text format, bound to HOST; 0 = off)' })

/** The outbound guard (SSRF) of every service that calls upstreams: see @modelgate/providers' Outbound. */
const outbound = {
  OUTBOUND_PUBLIC_ONLY: bool(false, 'refuse private and loopback upstream addresses for channels and admin-set URLs too'),
  OUTBOUND_ALLOW: Type.String({ default: '', pattern: '^[^\\s,]*(,\\s*[^\\s,]*)*$', description: 'must be CIDRs, addresses or host names, comma-separated (outbound targets allowed even when metadata, or private under OUTBOUND_PUBLIC_ONLY or supplied by users)' }),
  OUTBOUND_DNS_SERVERS: Type.String({ default: '', pattern: '^[^\\s,]*(,\\s*[^\\s,]*)*$', description: 'must be DNS server addresses (ip or ip:port), comma-separated (resolve outbound host names with these instead of the system resolver)' })
}

const common = {
  ...outbound,
  DATABASE_URL: databaseUrl,
  REDIS_URL: serviceRedisUrl,
  REDIS_KEY_PREFIX: redisPrefix,
  PG_POOL_MAX: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: 'must be a whole number 1-1000 (Postgres connections this process may open; every replica opens up to this many)' }),
  LOG_LEVEL: logLevel,
  HOST: host,
  MIGRATE_ON_START: bool(true, 'run database migrations at start'),
  MIGRATE_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://[^\\s]+$', description: 'must be a postgres:// connection URL (a direct connection for migrations at start, when DATABASE_URL goes through PgBouncer in transaction mode; unset = DATABASE_URL)' })),
  SHUTDOWN_GRACE_MS: shutdownGrace,
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({ default: '', pattern: '^(https?://[^\\s]+)?$', description: 'must be an http(s):// URL or empty (OTLP/HTTP collector base URL; traces are sent to <url>/v1/traces; empty = tracing off)' }),
  OTEL_SERVICE_NAME: Type.String({ default: '', description: 'must be a string (service.name of the traces; empty = the service\'s own name)' })
}

export const gatewayConfigSchema = Type.Object({
  ...common,
  PORT: port(3000, 'gateway'),
  METRICS_PORT: metricsPort(9464),
  CONTROL_PLANE_URL: Type.String({ pattern: '^https?://[^\\s]+$', default: 'http://127.0.0.1:3001', description: 'must be an http(s):// URL of the control plane' }),
  CONTROL_PLANE_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1024, default: 32, description: 'must be a whole number 1-1024 (keep-alive connections from the gateway to the control plane at most)' }),
  CRYPTO_SECRET: secret('encrypts token keys and channel keys'),
  SESSION_SECRET: secret('verifies console sessions for the playground, and proves the gateway\'s forwarded headers to the control plane'),
  SESSION_TTL_HOURS: Type.Integer({ minimum: 1, maximum: 8760, default: 720, description: 'must be hours 1-8760 (console session lifetime)' }),
  UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 300_000, description: 'must be milliseconds 1000-3600000 (longest wait for an upstream\'s response headers, then for the first chunk of its body and between two chunks; not a bound on a whole answer, so a long stream that keeps coming is never cut)' }),
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000, description: 'must be milliseconds 1000-3600000 (streamed requests only: longest wait from sending the request upstream to the first byte of its body, headers included; a stream not begun by then is tried on the next channel, else answered 504 upstream_timeout; UPSTREAM_TIMEOUT_MS applies as well, the shorter wins; a non-streamed answer, whose first byte comes once it is all made, has UPSTREAM_TIMEOUT_MS alone)' }),
  RELAY_BODY_LIMIT_MB: Type.Integer({ minimum: 1, maximum: 1024, default: 64, description: 'must be megabytes 1-1024 (largest relay request body)' }),
  RELAY_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 0, default: 0, description: 'must be a whole number >= 0 (relay requests per client IP per minute; 0 = no limit)' }),
  GATEWAY_MAX_CONNECTIONS_PER_IP: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 1000, description: 'must be a whole number >= 0 (open connections one client address may hold at once; more are answered 429 and closed; the trusted load balancers of GATEWAY_TRUST_PROXY are not counted; 0 = no cap)' }),
  GATEWAY_TRUST_PROXY: trustProxy('', 'load balancers in front of the gateway whose X-Forwarded-For and X-Forwarded-Proto are believed, or how many hops of them; empty or 0 = none, the socket address is the client'),
  RELAY_LEASE_TTL_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 60_000, description: 'must be milliseconds 1000-600000 (how long a request counts against concurrency limits after its gateway stopped renewing it, e.g. died)' }),
  STATE_REFRESH_MS: Type.Integer({ minimum: 1000, default: 60_000, description: 'must be milliseconds >= 1000 (full reload of routing and options, a safety net for missed change messages)' }),
  DRAIN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 120_000, description: 'must be milliseconds 0-3600000 (at shutdown, how long in-flight relays may finish before the streams still running are cut with an error event and billed for what was sent)' }),
  HEAP_GROWTH_PERCENT: Type.Integer({ minimum: 0, maximum: 300, default: 20, description: 'must be a whole number 0-300 (how far the heap may grow past what the last full collection kept; 0 = V8\'s own policy)' })
})
export type GatewayConfig = Static<typeof gatewayConfigSchema>

export const controlPlaneConfigSchema = Type.Object({
  ...common,
  CONTROL_PLANE_PORT: port(3001, 'control plane'),
  METRICS_PORT: metricsPort(9465),
  SESSION_SECRET: secret('signs console sessions'),
  CRYPTO_SECRET: secret('encrypts token keys and channel keys'),
  TRUST_PROXY: trustProxy('loopback,linklocal,uniquelocal', 'proxies (the gateway) whose X-Forwarded-For and X-Forwarded-Proto are believed, or how many hops of them; 0 = none'),
  INITIAL_ROOT_PASSWORD: Type.Optional(Type.String({ minLength: 8, maxLength: 20, secret: true, accepts: ['123456'], description: 'must be 8-20 characters, or 123456 (password of the root account created on first start on an empty database; 123456 is the well-known default, flagged until changed; unset: no account is created and the console asks for the first one)' })),
  WEB_DIST_DIR: Type.Optional(Type.String({ minLength: 1, description: 'must be a directory holding the built console' })),
  SESSION_TTL_HOURS: Type.Integer({ minimum: 1, maximum: 8760, default: 720, description: 'must be hours 1-8760 (console session lifetime)' }),
  GITHUB_OAUTH_URL: httpUrl('https://github.com', 'GitHub OAuth authorize/token base'),
  GITHUB_API_URL: httpUrl('https://api.github.com', 'GitHub API base'),
  LINUXDO_OAUTH_URL: httpUrl('https://connect.linux.do', 'LinuxDO OAuth base'),
  TURNSTILE_VERIFY_URL: httpUrl('https://challenges.cloudflare.com/turnstile/v0/siteverify', 'Turnstile siteverify endpoint')
})
export type ControlPlaneConfig = Static<typeof controlPlaneConfigSchema>

export const billingWorkerConfigSchema = Type.Object({
  ...common,
  BILLING_WORKER_PORT: port(3002, 'billing worker health endpoints'),
  METRICS_PORT: metricsPort(9466),
  CRYPTO_SECRET: secret('decrypts channel keys for periodic channel tests'),
  CHANNEL_TEST_INTERVAL_MINUTES: Type.Integer({ minimum: 1, maximum: 1440, default: 10, description: 'must be minutes 1-1440 (periodic channel tests)' }),
  WORKER_LOCK_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000, description: 'must be milliseconds 1000-600000 (how soon a job held by a dead worker is taken over)' }),
  RECONCILE_INTERVAL_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 300_000, description: 'must be milliseconds 1000-86400000 (how often cached balances are checked against Postgres and orphaned reservations settled)' }),
  ORPHAN_RESERVATION_MS: Type.Integer({ minimum: 1000, maximum: 21_000_000, default: 7_200_000, description: 'must be milliseconds 1000-21000000 (the longest a relay request may run: a reservation older than this lost its gateway and is settled at its estimate)' }),
  TASK_POLL_INTERVAL_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 15_000, description: 'must be milliseconds 1000-3600000 (how often unfinished drawing, music and video tasks are asked about upstream)' }),
  TASK_TIMEOUT_MINUTES: Type.Integer({ minimum: 1, maximum: 43_200, default: 360, description: 'must be minutes 1-43200 (a task unfinished this long after its submit is failed and refunded)' })
})
export type BillingWorkerConfig = Static<typeof billingWorkerConfigSchema>

/** What `npm start` (the local supervisor) reads before it starts anything. */
export const stackConfigSchema = Type.Object({
  DATABASE_URL: Type.Optional(databaseUrl),
  REDIS_URL: Type.Optional(redisUrl),
  DATA_DIR: Type.String({ minLength: 1, default: './data', description: 'must be a directory path' }),
  PORT: port(3000, 'gateway'),
  CONTROL_PLANE_PORT: port(3001, 'control plane'),
  BILLING_WORKER_PORT: port(3002, 'billing worker'),
  LOCAL_POSTGRES_PORT: port(5432, 'Postgres started by npm start'),
  LOCAL_REDIS_PORT: port(6379, 'Redis started by npm start'),
  SESSION_SECRET: Type.Optional(secret('signs console sessions')),
  CRYPTO_SECRET: Type.Optional(secret('encrypts token keys and channel keys')),
  INITIAL_ROOT_PASSWORD: controlPlaneConfigSchema.properties.INITIAL_ROOT_PASSWORD,
  FIRST_RUN_SETUP: bool(false, 'true: npm start makes no root / 123456 on an empty database and the console asks for the first account; ignored when INITIAL_ROOT_PASSWORD is set'),
  LOG_LEVEL: logLevel
})
export type StackConfig = Static<typeof stackConfigSchema>

/** What `npm run migrate` reads. */
export const migrateConfigSchema = Type.Object({ DATABASE_URL: databaseUrl })
export type MigrateConfig = Static<typeof migrateConfigSchema>

/** What the test harness (`@modelgate/testing`) reads. */
export const testConfigSchema = Type.Object({
  TEST_DATABASE_URL: Type.Optional(databaseUrl),
  TEST_REDIS_URL: Type.Optional(redisUrl),
  /** The console build the browser tests serve (default: web/dist). */
  E2E_WEB_DIST: Type.Optional(Type.String({ minLength: 1 })),
  /** Set by the suite's runner for each test file: its test databases are named with it and dropped by the runner. */
  MODELGATE_TEST_DB_TAG: Type.Optional(Type.String({ pattern: '^[a-z0-9]{1,40}$', description: 'must be 1-40 lowercase letters and digits' }))
})
export type TestConfig = Static<typeof testConfigSchema>
