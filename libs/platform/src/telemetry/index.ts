// OpenTelemetry for the services, imported by each entry point before anything else: the SDK's
// instrumentations patch `http`, `express`, `pg`, `ioredis`, undici and the AWS SDK as they are
// first required, so they must be registered before those load. This file requires nothing else
// while telemetry is off (the default), so off costs nothing.
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { UrlTokens } from '../../../auth/src/query-key';

let sdk: NodeSDK | undefined;

/**
 * Whether the standard OpenTelemetry variables ask for traces: an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or an explicit
 * `OTEL_TRACES_EXPORTER`, and neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none`.
 */
export function telemetryEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const set = (name: string) => (env[name] ?? '').trim() !== '';
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim());
  if (exporters.includes('none')) return false;
  return (
    set('OTEL_EXPORTER_OTLP_ENDPOINT') ||
    set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ||
    set('OTEL_TRACES_EXPORTER')
  );
}

/**
 * Starts the OpenTelemetry SDK when the environment asks for it (see `telemetryEnabled`), named
 * `serviceName` unless `OTEL_SERVICE_NAME` (or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`)
 * names it; `urlTokens` as the logging module's (credentials handed out in URLs). Call
 * once, first thing in an entry point.
 */
export function startTelemetry(serviceName: string, urlTokens?: UrlTokens): void {
  if (sdk !== undefined || !telemetryEnabled()) return;
  // Loaded only now, synchronously: the instrumentations must be in place before the entry
  // point's next import, so an `import()` (asynchronous) would come too late.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startNodeSdk } = require('./node-sdk') as typeof import('./node-sdk');
  sdk = startNodeSdk(serviceName, urlTokens);
}

/** Exports the spans still buffered and stops the SDK: part of a graceful shutdown. */
export async function stopTelemetry(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown().catch(() => undefined);
}
