import type { FastifyBaseLogger } from 'fastify'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type Bindings = Record<string, unknown>
type Pino = FastifyBaseLogger & { isLevelEnabled: (level: string) => boolean }

/**
 * A request's logger, made only when something is logged at an enabled level. Fastify gives
 * every request a child logger; with redaction configured, pino runs every binding through the
 * redactor when the child is made (about 2 KB of garbage a request, measured), and most requests
 * log nothing at the production level.
 */
class RequestLogger {
  readonly #parent: Pino
  readonly #bindings: Bindings
  #real: Pino | undefined

  constructor (parent: Pino, bindings: Bindings) {
    this.#parent = parent
    this.#bindings = bindings
  }

  #logger (): Pino {
    return (this.#real ??= this.#parent.child(this.#bindings) as Pino)
  }

  #log (level: Level, args: unknown[]): void {
    if (!(this.#real ?? this.#parent).isLevelEnabled(level)) return
    const logger = this.#logger() as unknown as Record<Level, (...a: unknown[]) => void>
    logger[level](...args)
  }

  get level (): string { return (this.#real ?? this.#parent).level }
  set level (value: string) { this.#logger().level = value }
  isLevelEnabled (level: string): boolean { return (this.#real ?? this.#parent).isLevelEnabled(level) }
  fatal (...args: unknown[]): void { this.#log('fatal', args) }
  error (...args: unknown[]): void { this.#log('error', args) }
  warn (...args: unknown[]): void { this.#log('warn', args) }
  info (...args: unknown[]): void { this.#log('info', args) }
  debug (...args: unknown[]): void { this.#log('debug', args) }
  trace (...args: unknown[]): void { this.#log('trace', args) }
  silent (): void {}
  child (bindings: Bindings, options?: object): FastifyBaseLogger { return this.#logger().child(bindings, options) }
  bindings (): Bindings { return (this.#logger() as unknown as { bindings: () => Bindings }).bindings() }
}

/** Fastify's `childLoggerFactory`: a request logger made on first use (eagerly for a route with its own level). */
export function lazyRequestLogger (logger: FastifyBaseLogger, bindings: Bindings, options: { level?: string }): FastifyBaseLogger {
  if (options.level !== undefined) return logger.child(bindings, options)
  return new RequestLogger(logger as Pino, bindings) as unknown as FastifyBaseLogger
}
