import { DynamicModule, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  configureHttpApp,
  createHttpAdapter,
  METRICS_REGISTRY,
  SlowReaders,
  useHttpMetrics,
} from '@app/platform';
import type { ProvisionerSettings } from './config/provisioner.settings';

/**
 * A provisioner process's HTTP app around its root module, as the API and the worker share it.
 * Each process's own file imports only its module, so the worker never loads the API's graph.
 */
export async function createProvisionerHttpApp(
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
