import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

interface RouteDefinition { schema: unknown, method: string, url: string, httpPart?: string }
type Compile = (route: RouteDefinition) => unknown
type BuildFromPool = (externalSchemas: unknown, options: { customOptions: Record<string, unknown>, plugins?: unknown[] }) => Compile
type BuildSerializer = (externalSchemas: unknown, options: unknown) => (route: { schema: unknown }) => unknown

/**
 * Compiled validators and serializers by what they were compiled from (the compiler's options,
 * the shared schemas and the route's schema, as JSON). Fastify copies every route schema for each
 * instance, so without this each instance compiles every schema again: one per process in
 * production, but dozens in a test file that builds an app per test, where compiling was most of
 * the file's CPU time. A compiled function depends only on those inputs, so instances share it.
 */
const compiled = new Map<string, unknown>()

function memo (key: string, compile: () => unknown): unknown {
  let fn = compiled.get(key)
  if (fn === undefined) {
    fn = compile()
    compiled.set(key, fn)
  }
  return fn
}

/**
 * Query strings, params and headers arrive as text, so their values are coerced to the declared
 * types; JSON bodies are not: `{"quota": "5"}` or `{"username": 5}` is a client error, not a
 * value to guess at.
 */
export const buildValidator = ((externalSchemas: unknown, ajvServerOptions?: { customOptions?: Record<string, unknown>, plugins?: unknown[] }) => {
  const factory = AjvCompiler() as unknown as BuildFromPool
  const plugins = ajvServerOptions?.plugins ?? []
  const base = ajvServerOptions?.customOptions ?? {}
  const lenient = factory(externalSchemas, { customOptions: { ...base, coerceTypes: 'array' }, plugins })
  const strict = factory(externalSchemas, { customOptions: { ...base, coerceTypes: false }, plugins })
  // Plugins are functions (not JSON): instances share compiled validators only without them.
  const shared = plugins.length === 0 ? `v:${JSON.stringify(base)}:${JSON.stringify(externalSchemas)}:` : undefined
  return (route: RouteDefinition) => {
    const body = route.httpPart === 'body'
    const compile = () => body ? strict(route) : lenient(route)
    return shared === undefined ? compile() : memo(`${shared}${body ? 'strict' : 'lenient'}:${JSON.stringify(route.schema)}`, compile)
  }
}) as unknown as ValidatorFactory

/** Fastify's serializer compiler (fast-json-stringify), with compiled serializers shared the same way. */
export const buildSerializer = ((externalSchemas: unknown, serializerOptions: unknown) => {
  const build = (SerializerSelector() as unknown as BuildSerializer)(externalSchemas, serializerOptions)
  const shared = `s:${JSON.stringify(serializerOptions ?? {})}:${JSON.stringify(externalSchemas)}:`
  return (route: { schema: unknown }) => memo(`${shared}${JSON.stringify(route.schema)}`, () => build(route))
}) as unknown as ReturnType<typeof SerializerSelector>
