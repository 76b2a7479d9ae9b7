// OpenTelemetry for the server process: the tracer provider the OTEL_* configuration asks for, and its flush at exit.
import { readFileSync } from 'node:fs'
import { diag, DiagLogLevel, type TracerProvider } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, ParentBasedSampler,
  SimpleSpanProcessor, TraceIdRatioBasedSampler, type Sampler
} from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import type { TracingConfig } from '../config/index.js'

export interface Tracing {
  /** For buildApp's `tracerProvider`. */
  provider: TracerProvider
  /** Sends the SDK's own complaints (a collector that refuses or cannot be reached) to `log`, which has none otherwise. */
  logTo (log: { warn (message: string): void }): void
  /** Exports the spans still queued, then stops; call once the app is closed. Never rejects. */
  shutdown (): Promise<void>
}

/**
 * How long the last spans may take to leave at exit. A collector that answers takes milliseconds; one
 * that is down is retried by the exporter for up to its timeout (10 s), which would use up all of
 * close-with-grace's delay and turn a clean exit into a killed one.
 */
const exportGrace = 2_000

// package.json is one level above src/ and dist/ alike.
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }

function sampler ({ sampler: name, samplerRatio }: TracingConfig): Sampler {
  const root = name.endsWith('always_on') ? new AlwaysOnSampler() : name.endsWith('always_off') ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(samplerRatio)
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}

/**
 * The provider is not registered as the process's global one: buildApp is handed it, and nothing
 * else in the process makes spans. Spans to OTLP go in batches, off the request path (the SDK's
 * OTEL_BSP_* variables tune them); spans to the console one by one, as they end, for trying it out.
 */
export function startTracing (config: TracingConfig): Tracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: version }),
    sampler: sampler(config),
    spanProcessors: [
      ...config.otlpEndpoint === null ? [] : [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.otlpEndpoint }))],
      ...config.console ? [new SimpleSpanProcessor(new ConsoleSpanExporter())] : []
    ]
  })
  let log: { warn (message: string): void } = { warn () {} }
  const report = (message: string) => log.warn(`OpenTelemetry: ${message}`)
  return {
    provider,
    logTo (to) {
      log = to
      // The SDK's errors are a collector's or the network's, not the service's: warnings for the operator.
      diag.setLogger({ error: report, warn: report, info: report, debug: report, verbose: report }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true })
    },
    async shutdown () {
      let timer: NodeJS.Timeout | undefined
      const gaveUp = new Promise<void>(resolve => {
        timer = setTimeout(() => resolve(report(`the last spans were not exported within ${exportGrace} ms`)), exportGrace)
      })
      await Promise.race([provider.shutdown().catch((error: Error) => report(`the last spans were not exported: ${error.message}`)), gaveUp])
      clearTimeout(timer)
    }
  }
}
