import { Inject, Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@app/platform';

/** How a registration ended: in the catalog, refused by it (not retried), or given up on. */
export type RegistrationOutcome = 'registered' | 'refused' | 'gave_up';

/** Registrations in the catalog, on the worker's /metrics. */
@Injectable()
export class StorageRegistrationMetrics {
  private readonly registrations: Counter<'outcome' | 'reason'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    const help = 'Catalog registrations that ended, by outcome and, for refusals, the reason';
    const labelNames = ['outcome', 'reason'] as const;
    this.registrations = new Counter({
      name: 'provisioner_catalog_registrations_total',
      help,
      labelNames,
      registers: [registry],
    });
    // Present at zero from the start, so alerts on refusals work before the first one.
    this.registrations.inc({ outcome: 'registered', reason: '' }, 0);
    this.registrations.inc({ outcome: 'gave_up', reason: 'catalog_unavailable' }, 0);
  }

  record(outcome: RegistrationOutcome, reason = ''): void {
    this.registrations.inc({ outcome, reason });
  }
}
