import { collectDefaultMetrics, Registry } from 'prom-client';

/** Injection token of the app's Prometheus registry (one per app instance, never the global one). */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

export interface MetricsOptions {
  /** Added as the `app` label to every series, so one dashboard can tell the processes apart. */
  app: string;
}

/**
 * A registry of its own per app: tests start several apps in one process, and the global
 * registry would refuse the second registration of every metric.
 */
export function createMetricsRegistry(options: MetricsOptions): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ app: options.app });
  collectDefaultMetrics({ register: registry });
  return registry;
}
