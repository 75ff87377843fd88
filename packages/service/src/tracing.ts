import { type Context, context as otelContext, type Link, ROOT_CONTEXT, type Span, type SpanContext, SpanKind, type Tracer, trace, TraceFlags } from '@opentelemetry/api'
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'

/**
 * Tracing of the process: off unless {@link startTracing} was given an OTLP endpoint. Code on a
 * hot path checks `tracing.enabled` before anything else, so with tracing off no span, context
 * or attribute object is ever made.
 */
export const tracing: { enabled: boolean, tracer: Tracer } = {
  enabled: false,
  tracer: trace.getTracer('modelgate')
}

let provider: NodeTracerProvider | undefined

/** What {@link startTracing} reads (the standard OpenTelemetry variable names). */
export interface TracingConfig {
  /** OTLP/HTTP base URL (`http://collector:4318`): spans go to `<url>/v1/traces`; empty = off. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string
  /** service.name of the spans; empty = `service`. */
  OTEL_SERVICE_NAME?: string
}

/**
 * Turns tracing on when OTEL_EXPORTER_OTLP_ENDPOINT is set: spans are batched and sent as
 * OTLP/HTTP (JSON) to `<endpoint>/v1/traces`. Resolves whether it is on. The SDK is loaded only
 * then: a process without tracing does not carry it (about 40 MB of resident memory).
 */
export async function startTracing (service: string, config: TracingConfig): Promise<boolean> {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT ?? ''
  if (endpoint === '' || provider !== undefined) return provider !== undefined
  const name = config.OTEL_SERVICE_NAME !== undefined && config.OTEL_SERVICE_NAME !== '' ? config.OTEL_SERVICE_NAME : service
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, NodeTracerProvider }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-node')
  ])
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` })
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': name }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 })]
  })
  tracing.tracer = provider.getTracer('modelgate')
  tracing.enabled = true
  return true
}

/** Sends the spans still buffered and stops tracing (at shutdown). */
export async function stopTracing (): Promise<void> {
  const p = provider
  if (p === undefined) return
  provider = undefined
  tracing.enabled = false
  tracing.tracer = trace.getTracer('modelgate')
  await p.shutdown().catch(() => {})
}

/** A span started now, as the child of `parent` when given (call only with tracing on). */
export function startSpan (name: string, parent?: Span | Context, kind: SpanKind = SpanKind.INTERNAL, links?: Link[]): Span {
  const ctx = parent === undefined ? otelContext.active() : 'spanContext' in parent ? trace.setSpan(ROOT_CONTEXT, parent) : parent
  return tracing.tracer.startSpan(name, { kind, ...(links === undefined ? {} : { links }) }, ctx)
}

/** The W3C `traceparent` of `span` (00-traceid-spanid-flags). */
export function traceparentOf (span: Span): string {
  const c = span.spanContext()
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** The remote span context of a W3C `traceparent`; undefined when absent or malformed. */
export function spanContextOf (traceparent: string | undefined): SpanContext | undefined {
  if (traceparent === undefined) return undefined
  const m = TRACEPARENT.exec(traceparent)
  if (m === null || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & TraceFlags.SAMPLED, isRemote: true }
}

/** The context whose parent is the span `traceparent` names (the root context when none). */
export function contextOf (traceparent: string | undefined): Context {
  const sc = spanContextOf(traceparent)
  return sc === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, sc)
}

export { SpanKind, SpanStatusCode } from '@opentelemetry/api'
export type { Span } from '@opentelemetry/api'
