import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { configureHttpApp } from '@app/platform';
import { CatalogAppModule } from './app.module';
import type { CatalogSettings } from './config/catalog.settings';

/** Builds the configured app without listening: shared by main.ts and the e2e tests. */
export async function createCatalogApp(settings: CatalogSettings): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(CatalogAppModule.forRoot(settings), {
    bufferLogs: true,
    bodyParser: false,
  });
  configureHttpApp(app, {
    maxBodyBytes: settings.MAX_BODY_BYTES,
    textBodyRoutes: [/^\/api\/admin\/terms\/[^/]+$/],
  });
  return app;
}
