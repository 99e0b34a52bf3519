import { NodeSDK } from '@opentelemetry/sdk-node';
import { AwsInstrumentation } from '@opentelemetry/instrumentation-aws-sdk';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import type { Span } from '@opentelemetry/api';
// The one module of the auth library the redaction needs, by path: '@app/auth' would load Nest
// and Express before the instrumentations are registered.
import {
  NO_URL_TOKENS,
  redactApiKeys,
  redactPathTokens,
  type UrlTokens,
} from '../../../auth/src/query-key';

/** The span attributes that hold a request's URL, path or target, in either semantic convention. */
const URL_ATTRIBUTES = ['http.target', 'http.url', 'url.full', 'url.path'];

/**
 * Keys travel in the query string in the older form (`?API_KEY=`): their value never leaves in
 * a span, however the name is spelt or encoded, as in the logs; nor does the token of a route
 * whose URL carries one (`urlTokens`). The instrumentations redact only names they know; this
 * rewrites what they recorded.
 */
const redactKeys =
  (urlTokens: UrlTokens) =>
  (span: Span): void => {
    const attributes = (span as unknown as { attributes?: Record<string, unknown> }).attributes;
    if (attributes === undefined) return;
    for (const name of URL_ATTRIBUTES) {
      const value = attributes[name];
      if (typeof value === 'string')
        span.setAttribute(name, redactPathTokens(redactApiKeys(value), urlTokens));
    }
    const query = attributes['url.query'];
    if (typeof query === 'string')
      span.setAttribute('url.query', redactApiKeys(`?${query}`).slice(1));
  };

/** Requests that are not work: probes and scrapes, every few seconds. */
const UNTRACED_PATHS = /^\/(health(\/|$)|metrics$)/;

/**
 * The NodeSDK, configured by the standard variables (endpoint, `OTEL_EXPORTER_OTLP_PROTOCOL`
 * http/protobuf, http/json or grpc, headers, `OTEL_TRACES_SAMPLER`, `OTEL_PROPAGATORS`: W3C
 * trace context by default, resource attributes). Traces only unless asked: the services have
 * Prometheus metrics and JSON logs of their own, so metrics and logs go over OTLP only when
 * `OTEL_METRICS_EXPORTER` / `OTEL_LOGS_EXPORTER` say so. Spans come from the instrumentations of
 * the libraries the services use, and only inside a trace (a request, a job): no root span for
 * every Redis poll, version heartbeat or health probe.
 */
export function startNodeSdk(serviceName: string, urlTokens: UrlTokens = NO_URL_TOKENS): NodeSDK {
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const named =
    (process.env.OTEL_SERVICE_NAME ?? '').trim() !== '' ||
    /(^|,)\s*service\.name\s*=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.test(request.url ?? ''),
        requireParentforOutgoingSpans: true,
        requestHook: redactKeys(urlTokens),
      }),
      new ExpressInstrumentation(),
      // Statements without their parameters (no catalog value ever leaves in a span).
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({
        requireParentforSpans: true,
        requestHook: redactKeys(urlTokens),
      }),
      new AwsInstrumentation({ suppressInternalInstrumentation: true }),
    ],
  });
  sdk.start();
  return sdk;
}
