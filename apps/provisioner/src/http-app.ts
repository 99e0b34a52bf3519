import { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { configureHttpApp } from '@app/platform';
import type { ProvisionerSettings } from './config/provisioner.settings';
import { ProvisionerApiModule } from './api.module';
import { configureQueueBackend } from './queue/queue-backend';
import { ProvisionerWorkerModule } from './worker.module';

async function create(
  module: DynamicModule,
  settings: ProvisionerSettings,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, {
    bufferLogs: true,
    bodyParser: false,
  });
  configureHttpApp(app, { maxBodyBytes: settings.MAX_BODY_BYTES });
  return app;
}

/** The API app without listening: shared by main.ts and the e2e tests. */
export function createProvisionerApiApp(settings: ProvisionerSettings): Promise<NestExpressApplication> {
  return create(ProvisionerApiModule.forRoot(settings, configureQueueBackend(settings)), settings);
}

/** The worker app (health server plus queue worker) without listening. */
export function createProvisionerWorkerApp(
  settings: ProvisionerSettings,
): Promise<NestExpressApplication> {
  return create(ProvisionerWorkerModule.forRoot(settings, configureQueueBackend(settings)), settings);
}
