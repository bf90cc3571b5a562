import type { TracingConfig } from '../config/index.ts';

export type OtlpProtocol = 'http/json' | 'http/protobuf';

/** Where and how spans are exported. */
export type OtlpSettings = {
  /** The traces URL (`<endpoint>/v1/traces`, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given). */
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  serviceName: string;
};

/** Tracing is off (`settings: null`) when no endpoint is set, or when the settings are wrong (`problem`). */
export type OtlpResolution = { settings: OtlpSettings | null; problem: string | null };

function httpUrl(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

function parseHeaders(text: string | undefined): Record<string, string> | null {
  const headers: Record<string, string> = {};
  if (!text?.trim()) return headers;
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at <= 0 || !key) return null;
    try {
      headers[decodeURIComponent(key)] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return null;
    }
  }
  return headers;
}

/**
 * Reads the standard OTLP settings (OTEL_EXPORTER_OTLP_ENDPOINT, _TRACES_ENDPOINT, _PROTOCOL,
 * _HEADERS, OTEL_SERVICE_NAME). Never throws: a malformed value is a `problem` that `doctor`
 * reports and start-up logs, and tracing stays off.
 */
export function otlpSettings(tracing: TracingConfig): OtlpResolution {
  const endpoint = tracing.otlp_traces_endpoint?.trim() || tracing.otlp_endpoint?.trim();
  if (!endpoint) return { settings: null, problem: null };
  const variable = tracing.otlp_traces_endpoint?.trim()
    ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
    : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const base = httpUrl(endpoint);
  if (!base) {
    return {
      settings: null,
      problem: `${variable} "${endpoint}" is not an http(s) URL; set it to the collector's OTLP/HTTP address, e.g. http://localhost:4318`,
    };
  }
  const protocol = (tracing.otlp_protocol?.trim() || 'http/protobuf') as string;
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    const why = protocol === 'grpc' ? 'grpc is not supported' : `"${protocol}" is not an OTLP protocol`;
    return {
      settings: null,
      problem: `OTEL_EXPORTER_OTLP_PROTOCOL: ${why}; use http/protobuf (the default) or http/json, with the collector's OTLP/HTTP port (4318)`,
    };
  }
  const headers = parseHeaders(tracing.otlp_headers);
  if (!headers) {
    return {
      settings: null,
      problem: 'OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas (values URL-encoded)',
    };
  }
  // The signal-specific variable is the full URL; the general one gets the traces path appended.
  const url =
    variable === 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
      ? endpoint
      : `${base.href.replace(/\/+$/, '')}/v1/traces`;
  return { settings: { url, protocol, headers, serviceName: tracing.service_name }, problem: null };
}
