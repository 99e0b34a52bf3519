import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  configureHttpApp,
  createHttpAdapter,
  HttpMetrics,
  METRICS_REGISTRY,
  setupOpenApi,
  SlowReaders,
  useHttpMetrics,
} from '@app/platform';
import { AccessRequestRefusalsService } from './access-requests/access-request-refusals.service';
import { AccessRequestGate } from './access-requests/access-request-gate';
import { CatalogAppModule } from './app.module';
import { FastReads } from './read-cache/fast-reads';
import { FdpIndexScheduler } from './fdp/fdp-index.scheduler';
import type { CatalogSettings } from './config/catalog.settings';

/** Version of the HTTP contract (spec/catalog-api.md) shown in the OpenAPI document. */
const CATALOG_API_VERSION = '1.0.0';

/** Builds the configured app without listening: shared by main.ts and the e2e tests. */
export async function createCatalogApp(settings: CatalogSettings): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    CatalogAppModule.forRoot(settings),
    createHttpAdapter(),
    {
      bufferLogs: true,
      bodyParser: false,
    },
  );
  // First, so requests refused before routing (the webhook's gate) are counted too.
  useHttpMetrics(app);
  const logger = new Logger('SlowReaders');
  const slowReaders = new SlowReaders(
    { ...settings.slowReaderBounds, maxHeldWeight: settings.DCAT_HELD_DATASETS_MAX },
    app.get(METRICS_REGISTRY),
    (message) => logger.warn(message),
  );
  configureHttpApp(app, {
    maxBodyBytes: settings.MAX_BODY_BYTES,
    maxJsonDepth: settings.MAX_JSON_DEPTH,
    maxJsonObjects: settings.MAX_JSON_OBJECTS,
    textBodyRoutes: [/^\/api\/admin\/terms\/[^/]+$/],
    beforeBodyParsing: [
      slowReaders.refuseWhenBusy(),
      new AccessRequestGate(settings, app.get(AccessRequestRefusalsService)).middleware(),
    ],
    // Express routes ignore case: /API/DATASETS is an import too, and gets its limit.
    largeBodies: {
      routes: [/^\/api\/(partners|cohorts|projects|datasets|contracts)$/i],
      maxBodyBytes: settings.MAX_IMPORT_BODY_BYTES,
    },
  });
  setupOpenApi(app, { title: 'Catalog API', version: CATALOG_API_VERSION, path: 'api/docs' });
  // In front of everything above: repeated reads are answered before Express sees them.
  app
    .get(FastReads)
    .attach(app.getHttpServer(), app.get(HttpMetrics), (req) => !!slowReaders.refusal(req));
  // In front of that: every answer is followed while it is sent, the fast ones too.
  slowReaders.watch(app.getHttpServer());
  // The HTTP app only (the CLI boots the same modules): FAIR Data Point indexes learn of it.
  app.get(FdpIndexScheduler).start();
  return app;
}
