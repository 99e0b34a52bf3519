import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenAPIObject } from '@nestjs/swagger';
import request from 'supertest';
import { createProvisionerApiApp } from '../../apps/provisioner/src/http-app';
import { startCatalogApp, type CatalogTestApp } from '../support/catalog-app';
import { provisionerTestSettings, queueEnv } from '../support/provisioner-app';

const API_MD = join(__dirname, '../../docs/api.md');

/** One line per route: method, path, who may call it, what it does. */
function routeTable(document: OpenAPIObject): string {
  const rows = Object.entries(document.paths).flatMap(([path, item]) =>
    (['get', 'post', 'put', 'patch', 'delete'] as const).flatMap((method) => {
      const op = item[method];
      if (!op) return [];
      const security = op.security ?? [];
      const optional = security.some((scheme) => Object.keys(scheme).length === 0);
      const caller = security.length === 0 ? 'no key' : optional ? 'key optional' : 'key';
      return [`| ${method.toUpperCase()} | \`${path}\` | ${caller} | ${op.summary ?? ''} |`];
    }),
  );
  return ['| method | path | caller | what |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** docs/api.md with the service's route table between its markers replaced. */
function withRoutes(markdown: string, service: string, table: string): string {
  const begin = `<!-- routes:${service} -->`;
  const end = `<!-- /routes:${service} -->`;
  const from = markdown.indexOf(begin);
  const to = markdown.indexOf(end);
  if (from === -1 || to === -1) throw new Error(`docs/api.md lacks ${begin} … ${end}`);
  return `${markdown.slice(0, from + begin.length)}\n${table}\n${markdown.slice(to)}`;
}

/**
 * docs/openapi/ holds the OpenAPI documents the two services serve (`/api/docs-json`,
 * `/docs-json`), so that a reader of the repository has the whole API reference without running
 * anything, and docs/api.md a table of their routes. This fails when either is not what the code
 * serves; run it with UPDATE_OPENAPI_DOCS=1 to write them.
 */
const DIR = join(__dirname, '../../docs/openapi');
const update = process.env.UPDATE_OPENAPI_DOCS === '1';

function compare(service: string, served: OpenAPIObject): void {
  const name = `${service}.json`;
  const file = join(DIR, name);
  const markdown = readFileSync(API_MD, 'utf8');
  const current = withRoutes(markdown, service, routeTable(served));
  if (update) {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(file, `${JSON.stringify(served, null, 2)}\n`);
    writeFileSync(API_MD, current);
  }
  expect({ file: name, present: existsSync(file) }).toEqual({ file: name, present: true });
  expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(served);
  expect(readFileSync(API_MD, 'utf8')).toEqual(current);
}

describe('docs/openapi/ holds the documents the services serve', () => {
  let catalog: CatalogTestApp;
  afterAll(async () => {
    await catalog?.close();
  });

  it('catalog-api.json', async () => {
    catalog = await startCatalogApp();
    const served = (await request(catalog.server).get('/api/docs-json').expect(200))
      .body as OpenAPIObject;
    compare('catalog-api', served);
    // A newcomer's first request names the docs, open to all.
    const home = await request(catalog.server).get('/').expect(200);
    expect(home.body).toEqual({
      service: 'Catalog API',
      version: served.info.version,
      links: {
        docs: '/api/docs',
        openapi: '/api/docs-json',
        health: '/health/ready',
        metrics: '/metrics',
      },
    });
    await request(catalog.server).get(home.body.links.docs).redirects(1).expect(200);
  });

  it('provisioner.json', async () => {
    const api = await createProvisionerApiApp(provisionerTestSettings(await queueEnv()));
    await api.init();
    try {
      const served = (await request(api.getHttpServer()).get('/docs-json').expect(200))
        .body as OpenAPIObject;
      compare('provisioner', served);
      const home = await request(api.getHttpServer()).get('/').expect(200);
      expect(home.body).toEqual({
        service: 'Provisioner API',
        version: served.info.version,
        links: {
          docs: '/docs',
          openapi: '/docs-json',
          health: '/health/ready',
          metrics: '/metrics',
          queue_dashboard: '/admin/queues',
        },
      });
      await request(api.getHttpServer()).get(home.body.links.docs).redirects(1).expect(200);
    } finally {
      await api.close();
    }
  });
});
