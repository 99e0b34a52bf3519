import { DynamicModule, Global, INestApplication, Module } from '@nestjs/common';
import { HttpMetrics } from './http-metrics';
import { MetricsController } from './metrics.controller';
import { createMetricsRegistry, METRICS_REGISTRY, MetricsOptions } from './metrics-registry';
import { TelemetryShutdown } from '../telemetry/telemetry-shutdown';

/**
 * `/metrics` in Prometheus text format, the HTTP request metrics, and the registry that app
 * modules add their own metrics to (inject METRICS_REGISTRY); and, when OpenTelemetry runs, the
 * export of its last spans at shutdown.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(options: MetricsOptions): DynamicModule {
    return {
      module: MetricsModule,
      controllers: [MetricsController],
      providers: [
        { provide: METRICS_REGISTRY, useFactory: () => createMetricsRegistry(options) },
        HttpMetrics,
        TelemetryShutdown,
      ],
      exports: [METRICS_REGISTRY, HttpMetrics],
    };
  }
}

/** Installs the request metrics middleware; call it first, before any other middleware. */
export function useHttpMetrics(app: INestApplication): void {
  app.use(app.get(HttpMetrics).middleware);
}
