import type { S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { generateApiKey, hashApiKey } from '@app/auth';
import { AppProcess, startServiceProcess, stopServiceProcess } from '../support/app-process';
import { TEST_GLOBAL_KEY } from '../support/catalog-app';
import { createCatalogDatabase } from '../support/databases';
import { ReceivedSpan, OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver';
import { queueEnv, TEST_WRITE_KEY } from '../support/provisioner-app';
import {
  createTestBucket,
  removeTestBucket,
  s3TestServer,
  testS3Client,
} from '../support/s3-server';
import { databaseEnv } from '../support/test-services';
import { PROCESS_START_MS } from '../support/timeouts';
import { poll } from '../support/wait';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';

const REGISTRATION_KEY = generateApiKey(48);
/** OTLP span kinds. */
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const dbSystem = (s: ReceivedSpan) => s.attributes['db.system'] ?? s.attributes['db.system.name'];

/**
 * One import request, one trace: the provisioner API, the imports queue, the worker with the
 * import's steps and its S3 calls, the registration queue and the catalog's registration with its SQL, each process
 * exporting over OTLP/HTTP JSON (the standard OTEL_* settings) to a receiver in this test.
 */
describe('OpenTelemetry: one trace per import', () => {
  let receiver: OtlpReceiver;
  let s3: S3Client;
  let bucket: string;
  const services: AppProcess[] = [];
  let catalogUrl: string;
  let apiUrl: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Exported a tenth of a second after they end, not five: the test waits for them.
      OTEL_BSP_SCHEDULE_DELAY: '100',
      LOG_LEVEL: 'warn',
    };
    const server = await s3TestServer();
    s3 = testS3Client(server);
    bucket = await createTestBucket(s3, 'traces');
    const dropzone = new DropzoneFixture(join(tempDir('e2e-trace'), 'dropzone'));
    dropzone
      .submission('SUB-T', { project: 'TRACE', datasets: ['DS-T'] })
      .dataset('DS-T', { submission: 'SUB-T', title: 'Traced reads', files: { 'a.txt': 'a' } });

    const catalog = await startServiceProcess('catalog-api', 'src/main', {
      ...databaseEnv(await createCatalogDatabase()),
      ...otel,
      GLOBAL_API_KEY: TEST_GLOBAL_KEY,
      MIGRATIONS_RUN: 'false',
      REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
    });
    services.push(catalog);
    catalogUrl = catalog.url;
    const provisioner = {
      ...(await queueEnv()),
      ...otel,
      PROVISIONER_API_KEY: TEST_WRITE_KEY,
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone.root }]),
      STORAGE_BACKEND: 's3',
      S3_ENDPOINT: server.endpoint,
      S3_REGION: server.region,
      S3_BUCKET: bucket,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: server.accessKeyId,
      S3_SECRET_ACCESS_KEY: server.secretAccessKey,
      CATALOG_URL: catalogUrl,
      CATALOG_API_KEY: REGISTRATION_KEY,
    };
    const [api, worker] = await Promise.all([
      startServiceProcess('provisioner', 'src/main', provisioner),
      startServiceProcess('provisioner', 'src/worker', provisioner, 'WORKER_HEALTH_PORT'),
    ]);
    services.push(api, worker);
    apiUrl = api.url;
    const project = await fetch(`${catalogUrl}/api/projects`, {
      method: 'POST',
      headers: { 'X-API-Key': TEST_GLOBAL_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items: [{ acronym: 'TRACE', name: 'Traced imports' }] }),
    });
    expect(project.status).toBe(200);
  }, 2 * PROCESS_START_MS);

  afterAll(async () => {
    await Promise.all(services.map(stopServiceProcess));
    await receiver?.close();
    if (bucket) await removeTestBucket(s3, bucket);
  });

  /** Polls until the spans of `traceId` include one matching each of `wanted`, then returns them. */
  /**
   * The trace's spans once it holds the `wanted` ones and every parent a span names (other than
   * the caller's span): a parent ends, and is exported, after its children, so on a loaded
   * machine it can still be on its way when they are in.
   */
  const traceHaving = (
    traceId: string,
    callerSpan: string,
    wanted: ((s: ReceivedSpan) => boolean)[],
    what: string,
  ) =>
    poll(
      () => {
        const spans = receiver.spans().filter((s) => s.traceId === traceId);
        const ids = new Set(spans.map((s) => s.spanId));
        const parentsIn = spans.every(
          (s) => !s.parentSpanId || s.parentSpanId === callerSpan || ids.has(s.parentSpanId),
        );
        return parentsIn && wanted.every((matching) => spans.some(matching)) ? spans : undefined;
      },
      what,
      30_000,
      50,
    );

  it("follows an import from the request to the catalog registration, under the caller's trace", async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const res = await fetch(`${apiUrl}/datasets/dropzone/import`, {
      method: 'POST',
      headers: {
        'X-API-Key': TEST_WRITE_KEY,
        'Content-Type': 'application/json',
        traceparent: `00-${traceId}-${callerSpan}-01`,
      },
      body: JSON.stringify({ dataset_id: 'DS-T' }),
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    await poll(
      async () => {
        const record = (await (
          await fetch(`${apiUrl}/imports/${encodeURIComponent(id)}`, {
            headers: { 'X-API-Key': TEST_WRITE_KEY },
          })
        ).json()) as { state: string; catalog?: { state: string } };
        return record.catalog?.state === 'registered' ? record : undefined;
      },
      'the import to be registered in the catalog',
      60_000,
      100,
    );
    // Each process exports its spans as they end: the registration job's ends last.
    const spans = await traceHaving(
      traceId,
      callerSpan,
      [
        (s) => s.service === 'catalog-api' && dbSystem(s) === 'postgresql',
        (s) => s.service === 'provisioner-worker' && s.name === 'process catalog-registration',
        (s) => s.service === 'provisioner-worker' && s.name === 'process imports',
        (s) => s.service === 'provisioner-worker' && s.name === 'import publish',
      ],
      'the spans of the import, from the request to the registration',
    );
    const byService = (service: string) => spans.filter((s) => s.service === service);

    // The caller's trace was accepted: the API's request span is a child of its span.
    const request = byService('provisioner-api').find((s) => s.kind === SERVER);
    expect(request).toMatchObject({ parentSpanId: callerSpan });
    // The queue: added in the request, processed by the worker (BullMQ's telemetry).
    expect(byService('provisioner-api')).toContainEqual(
      expect.objectContaining({ kind: PRODUCER, name: expect.stringMatching(/^add imports\./) }),
    );
    const worker = byService('provisioner-worker');
    expect(worker).toContainEqual(
      expect.objectContaining({ kind: CONSUMER, name: 'process imports' }),
    );
    // The import's steps, each a span of its own under the job's (ImportTimeline), named as the
    // step histogram's labels and the worker's log line name them.
    const job = worker.find((s) => s.name === 'process imports')!;
    const steps = worker.filter((s) => s.attributes['provisioner.import.step'] !== undefined);
    expect(steps.map((s) => s.name).sort()).toEqual(
      ['resolve', 'plan', 'stage', 'verify', 'flush', 'publish'].map((s) => `import ${s}`).sort(),
    );
    for (const step of steps) {
      expect(step.name).toBe(`import ${step.attributes['provisioner.import.step']}`);
      expect(step.parentSpanId).toBe(job.spanId);
    }
    // Its storage calls (the AWS SDK's S3 operations) and the registration queue.
    expect(worker.filter((s) => s.attributes['rpc.service'] === 'S3').length).toBeGreaterThan(0);
    expect(worker).toContainEqual(
      expect.objectContaining({
        kind: PRODUCER,
        name: expect.stringMatching(/^add catalog-registration\./),
      }),
    );
    expect(worker).toContainEqual(
      expect.objectContaining({ kind: CONSUMER, name: 'process catalog-registration' }),
    );
    // The registration: the worker's HTTP call carries the trace to the catalog (traceparent).
    const registration = byService('catalog-api').find((s) => s.kind === SERVER)!;
    expect(registration).toBeDefined();
    const caller = worker.find((s) => s.spanId === registration.parentSpanId);
    expect(caller).toMatchObject({ kind: CLIENT });
    // Every span of the trace hangs from the caller's span: one tree, no second root.
    const ids = new Set(spans.map((s) => s.spanId));
    expect(spans.filter((s) => !ids.has(s.parentSpanId)).map((s) => s.parentSpanId)).toEqual(
      spans.filter((s) => !ids.has(s.parentSpanId)).map(() => callerSpan),
    );
  });

  it('gives a catalog request spans for its SQL, never its key, and sends nothing but traces', async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    // The key in the query string, the older form: its value must not travel in a span.
    const res = await fetch(
      `${catalogUrl}/api/admin/audit?object=dataset:1&API_KEY=${TEST_GLOBAL_KEY}`,
      { headers: { traceparent: `00-${traceId}-${callerSpan}-01` } },
    );
    expect(res.status).toBe(200);
    const spans = await traceHaving(
      traceId,
      callerSpan,
      [(s) => s.kind === SERVER, (s) => dbSystem(s) === 'postgresql'],
      'the SQL spans of a catalog request',
    );
    expect(spans.every((s) => s.service === 'catalog-api')).toBe(true);
    expect(JSON.stringify(spans)).not.toContain(TEST_GLOBAL_KEY);
    expect(JSON.stringify(spans)).toContain('[REDACTED]');
    expect(new Set(receiver.paths())).toEqual(new Set(['/v1/traces']));
  });
});
