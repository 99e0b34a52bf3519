import { DataSource } from 'typeorm';
import { gzipSync } from 'node:zlib';
import { hashApiKey } from '@app/auth';
import { buildTypeOrmOptions } from '../../apps/catalog-api/src/typeorm-options';
import { KEYS, loadDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { AppProcess, freePort, startAppProcess } from '../support/app-process';
import { createCatalogDatabase } from '../support/databases';
import {
  IMPOSSIBLE_DATES,
  IMPOSSIBLE_TIMESTAMPS,
  INVALID_UTF8,
  KEY_PARAMETER_NAMES,
  malformedRequests,
  withBytes,
} from '../support/hostile-input';
import { queueEnv, TEST_READ_KEY, TEST_WRITE_KEY } from '../support/provisioner-app';
import { sendRaw } from '../support/raw-http';
import { until } from '../support/wait';
import { catalogFingerprint } from './support/catalog-snapshot';

/** A running service: its process (logs at info, as in production), base URL and a key. */
interface Service {
  name: string;
  process: AppProcess;
  port: number;
  base: string;
  key: string;
  /** A route that needs a key and answers 200 with one. */
  protectedPath: string;
  /** A POST route that reads its body once the key passed. */
  bodyPath: string;
}

async function start(
  name: 'catalog-api' | 'provisioner',
  env: Record<string, string>,
  key: string,
  protectedPath: string,
  bodyPath: string,
): Promise<Service> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = startAppProcess(name, 'src/main', {
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  });
  await until(
    () =>
      fetch(`${base}/health/live`).then(
        (res) => res.ok,
        () => false,
      ),
    `${name} to start`,
    80_000,
    100,
  );
  return { name, process: child, port, base, key, protectedPath, bodyPath };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Answer {
  status: number;
  id: string;
  body: { status?: string; more?: { errors?: { parameter?: string; field?: string }[] } };
}

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  return {
    status: res.status,
    id: res.headers.get('x-request-id') ?? '',
    body: (await res.json()) as Answer['body'],
  };
}

/** The log lines (JSON) that carry one of these request ids, once all have been written. */
async function logLines(service: Service, ids: string[]): Promise<string[]> {
  await until(
    () => ids.every((id) => service.process.output().includes(id)),
    `${service.name} log lines`,
  );
  return service.process
    .output()
    .split('\n')
    .filter((line) => ids.some((id) => line.includes(id)));
}

describe('the HTTP surface of both services under hostile clients', () => {
  let catalog: Service;
  let provisioner: Service;
  let catalogData: DataSource;

  beforeAll(async () => {
    const databaseUrl = await createCatalogDatabase();
    catalogData = new DataSource(
      buildTypeOrmOptions({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: 2 }),
    );
    await catalogData.initialize();
    await loadDemoCatalog(databaseUrl);
    const dropzone = tempDir('surface-dz');
    new DropzoneFixture(dropzone)
      .submission('SUB-SURFACE', { datasets: ['DS-SURFACE-1'] })
      .dataset('DS-SURFACE-1', { submission: 'SUB-SURFACE', files: { 'a.txt': 'payload\n' } });
    [catalog, provisioner] = await Promise.all([
      start(
        'catalog-api',
        {
          DATABASE_URL: databaseUrl,
          MIGRATIONS_RUN: 'false',
          GLOBAL_API_KEY: KEYS.global,
          ACCESSREQ_INTEGRATION_ENABLED: 'true',
          ACCESSREQ_ALLOWED_IP_ADDRESSES: '127.0.0.1',
        },
        KEYS.global,
        '/api/datasets',
        '/api/partners',
      ),
      start(
        'provisioner',
        {
          ...(await queueEnv()),
          PROVISIONER_API_KEY: TEST_WRITE_KEY,
          PROVISIONER_READ_API_KEYS: TEST_READ_KEY,
          STORAGE_ROOT: tempDir('surface-st'),
          SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone }]),
        },
        TEST_WRITE_KEY,
        '/imports',
        '/datasets/dropzone/import',
      ),
    ]);
  }, 120_000);
  afterAll(async () => {
    for (const service of [catalog, provisioner]) {
      service?.process.child.kill('SIGTERM');
      await service?.process.exited;
    }
    await catalogData?.destroy();
  });

  const services = () => [catalog, provisioner];

  it('accepts a key in the query under any encoding of its name that Express decodes, and logs none of them', async () => {
    for (const service of services()) {
      // The encoding the review found: the guard reads it as API_KEY.
      const accepted = await send(
        `${service.base}${service.protectedPath}?API%5FKEY=${service.key}`,
      );
      expect(accepted.status).toBe(200);
      const ids = [accepted.id];
      for (const name of KEY_PARAMETER_NAMES) {
        for (const path of [
          service.protectedPath,
          '/no-such-route',
          `${service.protectedPath}?page=x`,
        ]) {
          const separator = path.includes('?') ? '&' : '?';
          const res = await fetch(`${service.base}${path}${separator}${name}=${service.key}`, {
            headers: { Referer: `${service.base}/admin/queues?${name}=${service.key}` },
          });
          await res.arrayBuffer();
          ids.push(res.headers.get('x-request-id')!);
        }
      }
      const lines = await logLines(service, ids);
      expect(lines.length).toBeGreaterThanOrEqual(ids.length);
      expect(service.process.output()).not.toContain(service.key);
    }
  });

  it('answers header floods, malformed request lines and broken framing in the envelope, with a logged request id', async () => {
    for (const service of services()) {
      const ids: string[] = [];
      for (const { name, raw, status } of malformedRequests(
        service.protectedPath,
        service.bodyPath,
      )) {
        // The key rides along in every refused request: it must not reach the log either.
        const withKey = raw.replace('Host: x\r\n', `Host: x\r\nX-API-Key: ${service.key}\r\n`);
        const answer = await sendRaw(service.port, withKey);
        expect({ name, status: answer?.status }).toEqual({ name, status });
        expect(answer?.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(answer?.headers['x-request-id']).toMatch(UUID);
        expect(JSON.parse(answer!.body.toString())).toMatchObject({ status: 'Error', more: {} });
        ids.push(answer!.headers['x-request-id']);
      }
      const lines = await logLines(service, ids);
      expect(lines.every((line) => line.includes('request refused by the HTTP parser'))).toBe(true);
      expect(service.process.output()).not.toContain(service.key);
      // Still serving.
      expect(
        (
          await send(`${service.base}${service.protectedPath}`, {
            headers: { 'X-API-Key': service.key },
          })
        ).status,
      ).toBe(200);
    }
  });

  it('refuses JSON bodies that are not UTF-8, naming the field, and writes nothing', async () => {
    const before = await catalogFingerprint(catalogData);
    const json = (key: string) => ({ 'Content-Type': 'application/json', 'X-API-Key': key });
    for (const [variant, bytes] of Object.entries(INVALID_UTF8)) {
      const cases = [
        {
          url: `${catalog.base}/api/partners`,
          headers: json(KEYS.global),
          body: withBytes('{"items":[{"name":"ok"},{"name":"Bad ', bytes, ' name"}]}'),
          parameter: 'items[1].name',
        },
        {
          url: `${catalog.base}/api/admin/users`,
          headers: json(KEYS.global),
          body: withBytes(
            '{"username":"u1","first_name":"',
            bytes,
            '","last_name":"x","email":"u1@x.org"}',
          ),
          parameter: 'first_name',
        },
        {
          url: `${catalog.base}/api/admin/terms/disease`,
          headers: { 'Content-Type': 'text/plain', 'X-API-Key': KEYS.global },
          body: withBytes('DOID:1\tfirst\nDOID:2\tsec', bytes, 'ond\n'),
          parameter: 'body',
        },
        {
          url: `${provisioner.base}/datasets/dropzone/import`,
          headers: json(TEST_WRITE_KEY),
          body: withBytes('{"dataset_id":"DS-', bytes, '"}'),
          parameter: 'dataset_id',
        },
      ];
      for (const c of cases) {
        const res = await send(c.url, { method: 'POST', headers: c.headers, body: c.body });
        expect({ variant, url: c.url, status: res.status }).toEqual({
          variant,
          url: c.url,
          status: 400,
        });
        expect(res.body.more?.errors?.[0]?.parameter).toBe(c.parameter);
      }
    }
    expect(await catalogFingerprint(catalogData)).toEqual(before);
    const imports = await send(`${provisioner.base}/imports`, {
      headers: { 'X-API-Key': TEST_READ_KEY },
    });
    expect(imports.body).toMatchObject({ items: [], count: 0 });
  });

  it('refuses JSON nested past MAX_JSON_DEPTH on every route that takes a body, in every shape, before parsing', async () => {
    const levels = 10_000;
    const deepObject = `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const deepArray = `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const mixed = `${'{"a":['.repeat(levels / 2)}1${']}'.repeat(levels / 2)}`;
    // Each shape where a DTO would walk it: at the top, under a declared field, in a list.
    const shapes: Record<string, (field: string) => string> = {
      'objects at the top': () => deepObject,
      'arrays at the top': () => deepArray,
      'objects under a field': (field) => `{"${field}":${deepObject}}`,
      'mixed under a field': (field) => `{"${field}":${mixed}}`,
      'arrays in a list': (field) => `{"${field}":[1,${deepArray}]}`,
      unclosed: (field) => `{"${field}":${'['.repeat(levels)}`,
      'past a string of brackets': (field) =>
        `{"x":"${'['.repeat(levels)}","${field}":${deepArray}}`,
    };
    for (const service of services()) {
      const document = (await (
        await fetch(`${service.base}${service.name === 'catalog-api' ? '/api/docs' : '/docs'}-json`)
      ).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const routes = Object.entries(document.paths).flatMap(([path, item]) =>
        ['post', 'put', 'patch', 'delete']
          .filter((method) => item[method] !== undefined)
          .map((method) => ({
            method: method.toUpperCase(),
            path: path.replace(/\{[^}]+\}/g, 'x1'),
          })),
      );
      expect(routes.length).toBeGreaterThanOrEqual(service.name === 'catalog-api' ? 15 : 2);
      for (const { method, path } of routes) {
        for (const [shape, body] of Object.entries(shapes)) {
          for (const gzip of [false, true]) {
            const text = body(path.includes('import') ? 'dataset_id' : 'items');
            const res = await fetch(`${service.base}${path}`, {
              method,
              headers: {
                'Content-Type': 'application/json',
                'X-API-Key': service.key,
                ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
              },
              body: gzip ? gzipSync(text) : text,
            });
            const answer = (await res.json()) as { status?: string; more?: { max_depth?: number } };
            expect({ route: `${method} ${path}`, shape, gzip, status: res.status }).toEqual({
              route: `${method} ${path}`,
              shape,
              gzip,
              status: 400,
            });
            expect(answer.more?.max_depth).toBe(64);
          }
        }
      }
    }
    // Still serving.
    for (const service of services()) {
      const res = await fetch(`${service.base}${service.protectedPath}`, {
        headers: { 'X-API-Key': service.key },
      });
      expect(res.status).toBe(200);
    }
  });

  it('answers concurrent creations of one thing with one success and 409s, never 500, and logs no SQL parameter', async () => {
    const [{ elu_accession: dataset }] = await catalogData.query<{ elu_accession: string }[]>(
      'SELECT elu_accession FROM datasets ORDER BY id DESC LIMIT 1',
    );
    const emails = Array.from({ length: 30 }, (_, i) => `racer-${i}@race.example`);
    // Each family: 30 requests at once that all want the same unique thing.
    const families: { name: string; path: string; body: (i: number) => unknown }[] = [
      {
        name: 'one username',
        path: '/api/admin/users',
        body: (i) => ({ username: 'race.one', first_name: 'R', last_name: 'R', email: emails[i] }),
      },
      {
        name: 'one oidc_id',
        path: '/api/admin/users',
        body: (i) => ({
          username: `race.oidc.${i}`,
          first_name: 'R',
          last_name: 'R',
          email: emails[i],
          oidc_id: 'race-subject',
        }),
      },
      {
        name: 'one endpoint name, in any case',
        path: '/api/admin/endpoints',
        body: (i) => ({
          name: i % 2 === 0 ? 'Race Catalog' : 'race catalog',
          url_pattern: 'https://race.example/${entity_id}',
        }),
      },
      {
        // Whichever spelling won the race above, a name is one name in any case.
        name: 'one exposure, the endpoint named in any case',
        path: '/api/admin/exposures',
        body: (i) => ({
          dataset,
          endpoint: i % 2 === 0 ? 'RACE CATALOG' : 'race Catalog',
          form_id: 1,
        }),
      },
    ];
    const ids: string[] = [];
    const created: string[] = [];
    for (const family of families) {
      const answers = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const res = await fetch(`${catalog.base}${family.path}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-API-Key': KEYS.global },
            body: JSON.stringify(family.body(i)),
          });
          ids.push(res.headers.get('x-request-id')!);
          const body = (await res.json()) as { api_key?: string; status?: string };
          if (body.api_key !== undefined) created.push(body.api_key);
          return { status: res.status, body };
        }),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect({ family: family.name, statuses }).toEqual({
        family: family.name,
        statuses: [201, ...Array<number>(29).fill(409)],
      });
      for (const refused of answers.filter((a) => a.status === 409))
        expect(refused.body.status).toBe('Error');
    }
    await logLines(catalog, ids);
    const output = catalog.process.output();
    for (const secret of [...emails, ...created, ...created.map(hashApiKey)])
      expect(output).not.toContain(secret);
    expect(output).not.toMatch(/"parameters"|already exists/);
  });

  it('refuses days and times that do not exist, naming the field, and writes nothing', async () => {
    const before = await catalogFingerprint(catalogData);
    const [{ elu_accession: accession }] = await catalogData.query<{ elu_accession: string }[]>(
      'SELECT elu_accession FROM datasets ORDER BY id LIMIT 1',
    );
    const post = (path: string, body: unknown, key?: string) =>
      send(`${catalog.base}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(key ? { 'X-API-Key': key } : {}) },
        body: JSON.stringify(body),
      });
    for (const date of IMPOSSIBLE_DATES) {
      const project = await post(
        '/api/projects',
        { items: [{ acronym: 'DATES', name: 'Dates', start_date: date }] },
        KEYS.global,
      );
      expect({ date, status: project.status }).toEqual({ date, status: 400 });
      expect(project.body.more?.errors?.[0]?.field).toBe('start_date');
      const audit = await send(
        `${catalog.base}/api/admin/audit?since=${encodeURIComponent(date)}`,
        {
          headers: { 'X-API-Key': KEYS.global },
        },
      );
      expect({ date, status: audit.status }).toEqual({ date, status: 400 });
      expect(audit.body.more?.errors?.[0]?.parameter).toBe('since');
    }
    for (const end of IMPOSSIBLE_TIMESTAMPS) {
      const rems = await post('/api/accessreq', [
        { application: 1, resource: accession, user: 'sub-dates', mail: null, end },
      ]);
      expect({ end, status: rems.status }).toEqual({ end, status: 400 });
      expect(rems.body.more?.errors?.[0]?.field).toBe('end');
    }
    expect(await catalogFingerprint(catalogData)).toEqual(before);
  });
});
