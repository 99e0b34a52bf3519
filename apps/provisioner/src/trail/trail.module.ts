import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Global, Module } from '@nestjs/common';
import type { ProvisionerSettings } from '../config/provisioner.settings';
import { CatalogClient } from '../catalog-client/catalog.client';
import { TrailEmitter } from './trail-emitter';
import { TrailMetrics } from './trail-metrics.service';
import { configureTrailProcessor, TrailProcessor } from './trail.processor';
import { TRAIL_QUEUE } from './trail.queue';

/**
 * The outbox of events for the catalog's access trail: its queue and emitter (both processes:
 * the API decides DRS access and serves bytes, the worker publishes imports) and, in the worker,
 * the processor that delivers them. Global: the DRS routes and the import processor emit.
 */
@Global()
@Module({})
export class TrailModule {
  static forApi(): DynamicModule {
    return {
      module: TrailModule,
      imports: [BullModule.registerQueue({ name: TRAIL_QUEUE })],
      providers: [TrailEmitter],
      exports: [TrailEmitter],
    };
  }

  static forWorker(settings: ProvisionerSettings): DynamicModule {
    configureTrailProcessor(settings);
    return {
      module: TrailModule,
      imports: [BullModule.registerQueue({ name: TRAIL_QUEUE })],
      providers: [TrailEmitter, CatalogClient, TrailMetrics, TrailProcessor],
      exports: [TrailEmitter],
    };
  }
}
