export { MetricsModule, useHttpMetrics } from './metrics.module';
export { METRICS_REGISTRY } from './metrics-registry';
export type { MetricsOptions } from './metrics-registry';
export { HttpMetrics, routeTemplate, UNMATCHED_ROUTE } from './http-metrics';
