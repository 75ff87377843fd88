import type { Static, TObject, TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { placeholderSecret } from './placeholder.js'

/** A snapshot of environment variables, `process.env` by default. */
export type Env = Readonly<Record<string, string | undefined>>

/** Thrown when one or more variables are missing or malformed; the message names every one. */
export class ConfigError extends Error {
  readonly code = 'CONFIG_ERR_INVALID'
  /** Names of the variables that failed, in schema order. */
  readonly variables: readonly string[]

  constructor (service: string, problems: ReadonlyArray<{ name: string, problem: string }>) {
    super(
      `Invalid configuration for ${service}: ` +
        problems.map((p) => `${p.name} ${p.problem}`).join('; ')
    )
    this.name = 'ConfigError'
    this.variables = problems.map((p) => p.name)
  }
}

function expectation (schema: TSchema): string {
  const s = schema as Record<string, unknown>
  if (typeof s['description'] === 'string') return s['description']
  if (Array.isArray(s['anyOf'])) {
    return 'must be one of ' + (s['anyOf'] as Array<Record<string, unknown>>).map((x) => String(x['const'])).join(', ')
  }
  return `must be ${String(s['type'])}`
}

const isSecret = (schema: TSchema): boolean => (schema as { secret?: boolean }).secret === true

/** How a bad value appears in the error: secrets only by length, URL passwords masked. */
function shown (schema: TSchema, value: unknown): string {
  if (isSecret(schema)) return `${String(value).length} characters`
  return JSON.stringify(String(value).replace(/(\/\/[^/:@\s]*:)[^@/\s]*@/, '$1***@'))
}

/**
 * Reads the variables named by `schema` from `env`, applies defaults, converts strings to the
 * declared types and validates. Empty strings count as unset. Secrets (`secret: true` in the
 * schema) that are placeholders (see placeholderSecret) are refused; values listed in a schema's
 * `accepts` are taken as they are. Returns a frozen object or
 * throws one ConfigError naming every bad variable.
 */
export function loadConfig<S extends TObject> (service: string, schema: S, env: Env = process.env): Readonly<Static<S>> {
  const raw: Record<string, unknown> = {}
  for (const name of Object.keys(schema.properties)) {
    const value = env[name]
    if (value !== undefined && value !== '') raw[name] = value
  }
  const value = Value.Convert(schema, Value.Default(schema, { ...raw })) as Record<string, unknown>
  const problems: Array<{ name: string, problem: string }> = []
  for (const [name, propSchema] of Object.entries(schema.properties as Record<string, TSchema>)) {
    if (!(name in value)) {
      if (schema.required?.includes(name) === true) problems.push({ name, problem: `is required (${expectation(propSchema)})` })
      continue
    }
    // Values the schema names as accepted as they are (the well-known default root password).
    if ((propSchema as { accepts?: readonly unknown[] }).accepts?.includes(value[name]) === true) continue
    if (!Value.Check(propSchema, value[name])) {
      problems.push({ name, problem: `${expectation(propSchema)} (got ${shown(propSchema, raw[name])})` })
      continue
    }
    const placeholder = isSecret(propSchema) ? placeholderSecret(String(value[name])) : undefined
    if (placeholder !== undefined) {
      const example = ((propSchema as { maxLength?: number }).maxLength ?? Infinity) <= 20 ? 'openssl rand -base64 15' : 'openssl rand -base64 48'
      problems.push({ name, problem: `is a placeholder, not a secret (${placeholder}): set a random value of your own, e.g. from \`${example}\`` })
    }
  }
  if (problems.length > 0) throw new ConfigError(service, problems)
  return Object.freeze(value) as Readonly<Static<S>>
}

