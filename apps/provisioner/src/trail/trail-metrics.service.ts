import { Inject, Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@app/platform';

/** What a delivery of a trail event came to. */
export type TrailDelivery = 'recorded' | 'already' | 'refused' | 'retried';

/** Trail deliveries to the catalog, on the worker's /metrics. */
@Injectable()
export class TrailMetrics {
  private readonly deliveries: Counter<'outcome'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.deliveries = new Counter({
      name: 'provisioner_trail_deliveries_total',
      help: 'Trail events delivered to the catalog, by outcome (retried: the catalog could not take one)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    // Present at zero from the start, so an alert on refusals works before the first one.
    for (const outcome of ['recorded', 'refused', 'retried'] as const) {
      this.deliveries.inc({ outcome }, 0);
    }
  }

  /** `events` delivered with this outcome (a batch counts each of its events). */
  record(outcome: TrailDelivery, events = 1): void {
    if (events > 0) this.deliveries.inc({ outcome }, events);
  }
}
