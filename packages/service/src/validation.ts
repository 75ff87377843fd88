import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler'

interface RouteDefinition { schema: unknown, method: string, url: string, httpPart?: string }
type Compile = (route: RouteDefinition) => unknown
type BuildFromPool = (externalSchemas: unknown, options: { customOptions: Record<string, unknown>, plugins?: unknown[] }) => Compile

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
  return (route: RouteDefinition) => route.httpPart === 'body' ? strict(route) : lenient(route)
}) as unknown as ValidatorFactory
