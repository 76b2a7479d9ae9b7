// OpenTelemetry tracing, from the standard OTEL_* variables: off unless they turn it on.
import { concern, read } from './concern.js'
import { ConfigError, oneOf, optional, text, trimmed, url, type Reader } from './parse.js'

/** The samplers of the OpenTelemetry specification that the SDK implements (`OTEL_TRACES_SAMPLER`). */
export type TraceSampler = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio'
const traceSamplers: readonly TraceSampler[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']

export interface TracingConfig {
  /** `service.name` of the spans (`OTEL_SERVICE_NAME`). */
  serviceName: string
  /** Further resource attributes (`OTEL_RESOURCE_ATTRIBUTES`, `key=value,…`), e.g. deployment.environment.name. */
  resourceAttributes: Record<string, string>
  /** Where spans are sent by OTLP over HTTP; null when no OTLP exporter is configured. */
  otlpEndpoint: string | null
  /** Whether spans are also printed on stdout (`OTEL_TRACES_EXPORTER=console`), to try tracing out. */
  console: boolean
  /** Which traces are recorded (`OTEL_TRACES_SAMPLER`); by default the caller's decision, else all. */
  sampler: TraceSampler
  /** The share of traces a traceidratio sampler records (`OTEL_TRACES_SAMPLER_ARG`, 0 to 1). */
  samplerRatio: number
}

const defaultServiceName = 'books-students-api'
// The OpenTelemetry specification's default for OTLP over HTTP: a collector on this host.
const defaultOtlpEndpoint = 'http://localhost:4318/v1/traces'

type Exporter = 'otlp' | 'console' | 'none'
const exporterNames: readonly Exporter[] = ['otlp', 'console', 'none']

const exporters: Reader<Exporter[]> = {
  accepts: '`otlp`, `console` or `none`, or a comma-separated list of them',
  read: (raw, name) => trimmed(raw, name) === ''
    ? []
    : raw.split(',').map(item => {
      const exporter = exporterNames.find(known => known === item.trim())
      if (exporter === undefined) throw new ConfigError(`${name} must be otlp, console or none, or a comma-separated list of them (got ${JSON.stringify(item.trim())})`)
      return exporter
    })
}

// The specification's booleans are case-insensitive; the message shows the value lowercased, as compared.
const disabled: Reader<boolean> = {
  accepts: '`true` or `false`, any case',
  read (raw, name) {
    const value = trimmed(raw, name).toLowerCase()
    if (value !== 'true' && value !== 'false') throw new ConfigError(`${name} must be true or false (got ${JSON.stringify(value)})`)
    return value === 'true'
  }
}

const isHttp = (href: string) => URL.canParse(href) && /^https?:$/.test(new URL(href).protocol)
// The general endpoint is the collector's root; each signal has its own path below it, and that URL is the one checked.
const tracesBelow = (root: string) => `${root.replace(/\/+$/, '')}/v1/traces`
const signalUrl = url(isHttp, 'an `http://` or `https://` URL', 'an http:// or https:// URL')
const rootUrl = url(raw => isHttp(tracesBelow(raw)), signalUrl.accepts, 'an http:// or https:// URL')

// Spans go out as OTLP/HTTP JSON, which a collector takes on the same path as protobuf; gRPC is another port and protocol.
const protocol = oneOf(['http/protobuf', 'http/json'], 'http/protobuf or http/json: this service exports OTLP over HTTP')

/** `key=value,…` with percent-encoded values, as the specification writes resource attributes. */
const attributes: Reader<Record<string, string>> = {
  accepts: '`key=value` pairs, comma-separated, values percent-encoded',
  read (raw, name) {
    const pairs: Record<string, string> = {}
    for (const pair of trimmed(raw, name) === '' ? [] : raw.split(',')) {
      const at = pair.indexOf('=')
      const key = pair.slice(0, at).trim()
      const value = percentDecoded(pair.slice(at + 1).trim())
      if (at < 0 || key === '' || value === undefined) {
        throw new ConfigError(`${name} must be key=value pairs, comma-separated, values percent-encoded (got ${JSON.stringify(pair)})`)
      }
      pairs[key] = value
    }
    return pairs
  }
}

function percentDecoded (encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded)
  } catch {
    return undefined
  }
}

/** The ratio of a ratio sampler; the message names the sampler it is for. */
function ratio (sampler: TraceSampler): Reader<number> {
  return {
    accepts: '0 to 1',
    read (raw, name) {
      const value = Number(trimmed(raw, name))
      if (!/^[\d.]+$/.test(raw) || !(value >= 0 && value <= 1)) {
        throw new ConfigError(`${name} must be a number from 0 to 1 for ${sampler} (got ${JSON.stringify(raw)})`)
      }
      return value
    }
  }
}

const variables = {
  sdkDisabled: { name: 'OTEL_SDK_DISABLED', default: 'false', reader: disabled, meaning: '`true` turns tracing off whatever else is set' },
  exporters: { name: 'OTEL_TRACES_EXPORTER', default: '', shown: 'unset (tracing off)', reader: exporters, meaning: 'where spans go: `otlp` to a collector, `console` to stdout (to try tracing out); `none` turns tracing off' },
  tracesEndpoint: { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', default: '', reader: optional(signalUrl), meaning: 'where spans are POSTed (OTLP/HTTP, JSON), used as is; setting it (or the next) alone turns OTLP tracing on' },
  endpoint: { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', default: '', reader: optional(rootUrl), meaning: `the collector's root; spans go to \`<it>/v1/traces\`. With neither set, \`otlp\` sends to \`${defaultOtlpEndpoint}\`` },
  tracesProtocol: { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', default: '', shown: 'unset (`OTEL_EXPORTER_OTLP_PROTOCOL`)', reader: optional(protocol), meaning: 'the OTLP protocol of traces: over HTTP only (spans are sent as JSON either way); gRPC is refused' },
  protocol: { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', default: 'http/protobuf', reader: protocol, meaning: 'the OTLP protocol, as for the traces one' },
  serviceName: { name: 'OTEL_SERVICE_NAME', default: '', shown: `\`${defaultServiceName}\``, reader: optional(text('a name')), meaning: '`service.name` of the spans (`service.version` is the package\'s version); wins over a `service.name` in `OTEL_RESOURCE_ATTRIBUTES`' },
  resourceAttributes: { name: 'OTEL_RESOURCE_ATTRIBUTES', default: '', reader: attributes, meaning: 'more resource attributes, e.g. `deployment.environment.name=prod`' },
  sampler: { name: 'OTEL_TRACES_SAMPLER', default: 'parentbased_always_on', reader: oneOf(traceSamplers), meaning: 'which traces are recorded; by default the caller\'s decision (its `traceparent`), else all' },
  samplerArg: { name: 'OTEL_TRACES_SAMPLER_ARG', default: '1', reader: ratio('traceidratio'), meaning: 'the share of traces the ratio samplers (`traceidratio`, `parentbased_traceidratio`) record; the others ignore it' }
}

export const tracing = concern({
  title: 'Tracing',
  about: 'OpenTelemetry tracing, off unless these standard variables turn it on (see [Operating](operating.md)).',
  variables,
  /**
   * On when OTEL_TRACES_EXPORTER names otlp or console, or when an OTLP endpoint is set and
   * OTEL_TRACES_EXPORTER is unset. (The SDK's own default would be otlp to a local collector,
   * exporting into the void on every host that has none.)
   */
  settle (values, env): { tracing: TracingConfig | null } {
    if (values.sdkDisabled) return { tracing: null }
    const names = values.exporters
    if (names.includes('none')) return { tracing: null }
    const signal = values.tracesEndpoint
    const root = signal === null ? values.endpoint : null
    const endpoint = root === null ? signal : tracesBelow(root)
    // Read only for OTLP, where the readers refuse a protocol other than HTTP.
    const otlp = (names.includes('otlp') || (names.length === 0 && endpoint !== null)) && (values.tracesProtocol ?? values.protocol).startsWith('http/')
    if (!otlp && !names.includes('console')) return { tracing: null }
    const resource = values.resourceAttributes
    const sampler = values.sampler
    return {
      tracing: {
        // As the specification says, OTEL_SERVICE_NAME wins over a service.name among the resource attributes.
        serviceName: values.serviceName ?? resource['service.name'] ?? defaultServiceName,
        resourceAttributes: resource,
        otlpEndpoint: otlp ? endpoint ?? defaultOtlpEndpoint : null,
        console: names.includes('console'),
        sampler,
        samplerRatio: sampler.endsWith('traceidratio') ? read(variables.samplerArg, env, ratio(sampler)) : 1
      }
    }
  }
})
