import type { ModuleMetadata } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { MockFactory } from '@nestjs/testing';
import { configureHttpApp, HttpAppOptions, LoggingModule } from '@app/platform';

/**
 * A minimal Nest app set up exactly like the real ones (configureHttpApp: envelope, body rules,
 * request ids), around the controllers and modules a library spec brings. Logs are silent.
 * `mock` stands in for every dependency the metadata does not provide.
 */
export async function createTinyHttpApp(
  metadata: ModuleMetadata,
  options: Partial<HttpAppOptions> = {},
  mock?: MockFactory,
): Promise<NestExpressApplication> {
  const builder = Test.createTestingModule({
    ...metadata,
    imports: [LoggingModule.forRoot({ level: 'silent' }), ...(metadata.imports ?? [])],
  });
  const moduleRef = await (mock ? builder.useMocker(mock) : builder).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({
    bodyParser: false,
    bufferLogs: true,
  });
  configureHttpApp(app, { maxBodyBytes: 64 * 1024, ...options });
  await app.init();
  return app;
}
