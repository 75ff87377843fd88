import { parseArgs } from 'node:util'
import { loadConfig } from '@modelgate/config'
import Type, { type Static } from 'typebox'

/** Scenario groups, in the order a full run measures them. */
export const GROUPS = ['relay', 'latency', 'stream', 'stream-latency', 'protocols', 'slow', 'routing', 'billing', 'logs'] as const
export type Group = typeof GROUPS[number]

const count = (fallback: number, what: string) =>
  Type.Integer({ minimum: 1, default: fallback, description: `must be a whole number >= 1 (${what})` })

// Variables are read through packages/config, the only reader of process.env.
const benchSchema = Type.Object({
  BENCH_DURATION: Type.Integer({ minimum: 1, maximum: 300, default: 12, description: 'must be seconds 1-300 (length of each measured scenario)' }),
  BENCH_ONLY: Type.String({ default: '', pattern: '^[a-z,-]*$', description: `must be a comma-separated list of ${GROUPS.join(', ')}` }),
  BENCH_SKIP: Type.String({ default: '', pattern: '^[a-z,-]*$', description: `must be a comma-separated list of ${GROUPS.join(', ')}` }),
  BENCH_PROFILE: Type.Boolean({ default: false, description: 'must be true or false (gateway and billing worker under --cpu-prof during the 50-connection run)' }),
  BENCH_CHANNELS: count(10_000, 'channels in the routing scenario'),
  BENCH_SLOW_STREAMS: count(5_000, 'concurrent slow streams'),
  BENCH_BILLING_EVENTS: count(100_000, 'usage events queued for the billing worker'),
  BENCH_LOG_ROWS: count(10_000_000, 'rows in the logs table'),
  BENCH_POSTGRES_URL: Type.String({ pattern: '^postgres(ql)?://[^\\s]+$', default: 'postgres://postgres@127.0.0.1:5432/postgres', description: 'must be a postgres:// URL of a server where a database may be created' }),
  BENCH_REDIS_URL: Type.String({ pattern: '^rediss?://[^\\s]+$', default: 'redis://127.0.0.1:6379', description: 'must be a redis:// URL' }),
  // The services' own default (LOG_LEVEL), so the figures describe what a deployment runs.
  BENCH_NODE: Type.String({ default: '', description: 'must be the path of a node binary (the one the services, the bare relay and the mock upstream run on; default: the bench\'s own)' }),
  BENCH_NODE_FLAGS: Type.String({ default: '', pattern: '^(--[a-z0-9-]+(=[^\\s]+)?( |$))*$', description: 'must be space-separated Node flags such as --max-semi-space-size=8 (added for the three services)' }),
  BENCH_LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info', description: 'must be a log level (the services\' LOG_LEVEL during the run)' })
})
type BenchEnv = Static<typeof benchSchema>

export interface BenchOptions {
  /** Seconds of each measured scenario (warm-up not included). */
  duration: number
  groups: Group[]
  profile: boolean
  channels: number
  slowStreams: number
  billingEvents: number
  logRows: number
  /** Server where the bench creates (and drops) its own database. */
  postgresUrl: string
  redisUrl: string
  /** The services' LOG_LEVEL during the run: their default, info, unless asked otherwise. */
  logLevel: string
  /** The node binary of every process the run starts ('' for the bench's own). */
  node: string
  /** Extra Node flags for the gateway, the control plane and the billing worker. */
  nodeFlags: string[]
}

const USAGE = `npm run bench -- [options]   (every option also as a BENCH_* variable)
  --duration N        seconds per scenario (BENCH_DURATION, default 12)
  --only a,b          only these groups (BENCH_ONLY): ${GROUPS.join(', ')}
  --skip a,b          all groups but these (BENCH_SKIP), e.g. --skip logs
  --profile           gateway and billing worker under --cpu-prof into bench/results/profiles/ (BENCH_PROFILE)
  --channels N        routing table size (BENCH_CHANNELS, default 10000)
  --slow-streams N    concurrent slow streams (BENCH_SLOW_STREAMS, default 5000)
  --billing-events N  queued usage events (BENCH_BILLING_EVENTS, default 100000)
  --log-rows N        logs table rows (BENCH_LOG_ROWS, default 10000000)
  --postgres-url URL  (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres)
  --redis-url URL     (BENCH_REDIS_URL, default redis://127.0.0.1:6379)
  --log-level L       the services' LOG_LEVEL (BENCH_LOG_LEVEL, default info: what a deployment runs)
  --node PATH         node binary the services, bare relay and mock upstream run on (BENCH_NODE; default
                      the bench's own), e.g. to compare two Node versions in one sitting
  --node-flags "F"    extra Node flags for the three services (BENCH_NODE_FLAGS), e.g. --max-semi-space-size=8`

function groupList (text: string, what: string): Group[] {
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '')
  for (const n of names) {
    if (!(GROUPS as readonly string[]).includes(n)) throw new Error(`${what}: unknown group "${n}"; groups: ${GROUPS.join(', ')}`)
  }
  return names as Group[]
}

/** Options from BENCH_* variables, overridden by command-line flags. Undefined after --help. */
export function benchOptions (argv: string[]): BenchOptions | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      only: { type: 'string' },
      skip: { type: 'string' },
      profile: { type: 'boolean' },
      channels: { type: 'string' },
      'slow-streams': { type: 'string' },
      'billing-events': { type: 'string' },
      'log-rows': { type: 'string' },
      'postgres-url': { type: 'string' },
      'redis-url': { type: 'string' },
      'log-level': { type: 'string' },
      node: { type: 'string' },
      'node-flags': { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help === true) {
    process.stdout.write(USAGE + '\n')
    return undefined
  }
  const env: BenchEnv = loadConfig('bench', benchSchema)
  const flags: Record<string, string | undefined> = {
    BENCH_DURATION: values.duration,
    BENCH_ONLY: values.only,
    BENCH_SKIP: values.skip,
    BENCH_PROFILE: values.profile === true ? 'true' : undefined,
    BENCH_CHANNELS: values.channels,
    BENCH_SLOW_STREAMS: values['slow-streams'],
    BENCH_BILLING_EVENTS: values['billing-events'],
    BENCH_LOG_ROWS: values['log-rows'],
    BENCH_POSTGRES_URL: values['postgres-url'],
    BENCH_REDIS_URL: values['redis-url'],
    BENCH_LOG_LEVEL: values['log-level'],
    BENCH_NODE: values.node,
    BENCH_NODE_FLAGS: values['node-flags']
  }
  // Flags go through the same schema, so a bad flag gets the same message as a bad variable.
  const given = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined))
  const fromFlags = loadConfig('bench flags', benchSchema, Object.fromEntries(
    Object.keys(benchSchema.properties).map((k) => [k, given[k] ?? stringOf(env[k as keyof BenchEnv])])
  ))
  const only = groupList(fromFlags.BENCH_ONLY, '--only')
  const skip = groupList(fromFlags.BENCH_SKIP, '--skip')
  return {
    duration: fromFlags.BENCH_DURATION,
    groups: GROUPS.filter((g) => (only.length === 0 || only.includes(g)) && !skip.includes(g)),
    profile: fromFlags.BENCH_PROFILE,
    channels: fromFlags.BENCH_CHANNELS,
    slowStreams: fromFlags.BENCH_SLOW_STREAMS,
    billingEvents: fromFlags.BENCH_BILLING_EVENTS,
    logRows: fromFlags.BENCH_LOG_ROWS,
    postgresUrl: fromFlags.BENCH_POSTGRES_URL,
    redisUrl: fromFlags.BENCH_REDIS_URL,
    logLevel: fromFlags.BENCH_LOG_LEVEL,
    node: fromFlags.BENCH_NODE,
    nodeFlags: fromFlags.BENCH_NODE_FLAGS.split(' ').filter((f) => f !== '')
  }
}

function stringOf (v: string | number | boolean): string {
  return String(v)
}
