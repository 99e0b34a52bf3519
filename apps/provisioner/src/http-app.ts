import { DynamicModule, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  configureHttpApp,
  createHttpAdapter,
  METRICS_REGISTRY,
  setupOpenApi,
  SlowReaders,
  useHttpMetrics,
} from '@app/platform';
import type { ProvisionerSettings } from './config/provisioner.settings';
import { ProvisionerApiModule } from './api.module';
import { PROVISIONER_VERSION } from './import-pipeline/provisioner-version';
import { configureQueueBackend } from './queue/queue-backend';
import { assertQueueSession } from './queue/queue-session';
import { ProvisionerWorkerModule } from './worker.module';
import { QUEUE_DASHBOARD_ROUTE } from './queue-dashboard/queue-dashboard.module';

async function create(
  module: DynamicModule,
  settings: ProvisionerSettings,
  slowReaders = false,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, createHttpAdapter(), {
    bufferLogs: true,
    bodyParser: false,
  });
  useHttpMetrics(app);
  // Downloads that stop reading hold a socket, a read buffer and a file: bounded per client, in
  // all, and in time, as the catalog's answers are (docs/security.md, slow readers).
  const logger = new Logger('SlowReaders');
  const readers = slowReaders
    ? new SlowReaders(settings.slowReaderBounds, app.get(METRICS_REGISTRY), (message) =>
        logger.warn(message),
      )
    : undefined;
  configureHttpApp(app, {
    maxBodyBytes: settings.MAX_BODY_BYTES,
    maxJsonDepth: settings.MAX_JSON_DEPTH,
    maxJsonObjects: settings.MAX_JSON_OBJECTS,
    beforeBodyParsing: readers ? [readers.refuseWhenBusy()] : [],
  });
  readers?.watch(app.getHttpServer());
  return app;
}

/** The API app without listening: shared by main.ts and the e2e tests. */
export async function createProvisionerApiApp(
  settings: ProvisionerSettings,
): Promise<NestExpressApplication> {
  const backend = configureQueueBackend(settings, 'api');
  await assertQueueSession(backend);
  const app = await create(ProvisionerApiModule.forRoot(settings, backend), settings, true);
  setupOpenApi(app, {
    title: 'Provisioner API',
    version: PROVISIONER_VERSION,
    path: 'docs',
    links: { queue_dashboard: QUEUE_DASHBOARD_ROUTE },
  });
  return app;
}

/** The worker app (health server plus queue worker) without listening. */
export async function createProvisionerWorkerApp(
  settings: ProvisionerSettings,
): Promise<NestExpressApplication> {
  const backend = configureQueueBackend(settings, 'worker');
  await assertQueueSession(backend);
  return create(ProvisionerWorkerModule.forRoot(settings, backend), settings);
}
