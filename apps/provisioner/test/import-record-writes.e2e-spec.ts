import type { NestExpressApplication } from '@nestjs/platform-express';
import { getQueueToken } from '@nestjs/bullmq';
import { Job, Queue, Worker } from 'bullmq';
import {
  provisionerTestSettings,
  QueueBackendChoice,
  queueEnv,
} from '../../../test/support/provisioner-app';
import { testServices } from '../../../test/support/test-services';
import { until } from '../../../test/support/wait';
import { createProvisionerApiApp } from '../src/http-app';
import { ImportRecordsRepository, JobLock } from '../src/imports/import-records.repository';
import { ImportJobData, importRetryPreset, IMPORTS_QUEUE } from '../src/imports/import.queue';
import { configureQueueBackend } from '../src/queue/queue-backend';
import { queueConnection } from '../src/queue/queue.module';
import { STORAGE_REGISTRATION_QUEUE } from '../src/storage-registration/storage-registration.queue';

const backends: QueueBackendChoice[] = testServices().redisUrl
  ? ['redis', 'postgres']
  : ['postgres'];

/** Long enough not to lapse during a step; the lapse test takes a lock of its own. */
const LOCK_MS = 30_000;

/**
 * Writes on an import record by workers (its attempt's errors and progress, the registration's
 * state) are made only under the lock of the job doing the writing, checked by the store in
 * the same step: BullMQ's job.updateData/updateProgress check nothing, which let a frozen
 * worker, woken after another had finished the import, wipe the record's registration.
 * Jobs are taken as a worker takes them (BullMQ's manual processing: a token, a lock).
 */
describe.each(backends)('import records written under a lock, on the %s backend', (backend) => {
  let api: NestExpressApplication;
  let records: ImportRecordsRepository;
  let imports: Queue;
  let registrations: Queue;
  const workers: Worker[] = [];

  /** Takes the next job of a queue as a worker does, holding its lock under `token`. */
  async function take(queueName: string, token: string, lockDuration = LOCK_MS): Promise<Job> {
    const settings = provisionerTestSettings(env);
    const backend = configureQueueBackend(settings, 'worker');
    const worker = new Worker(queueName, null, {
      connection: queueConnection(backend),
      prefix: backend.prefix,
      lockDuration,
      autorun: false,
    });
    workers.push(worker);
    let job: Job | undefined;
    await until(
      async () => (job = await worker.getNextJob(token, { block: false })) !== undefined,
      `a job of ${queueName}`,
    );
    return job!;
  }

  const data = async (id: string): Promise<ImportJobData> => (await imports.getJob(id))!.data;
  /** Queues the import of a dataset as the producer does; returns its id. */
  const addImport = async (key: string): Promise<string> => {
    const id = `dropzone-dataset-${key}`;
    await imports.add(
      'dataset',
      { source: 'dropzone', key, path: 'p' },
      { jobId: id, ...importRetryPreset(3) },
    );
    return id;
  };
  let env: Record<string, string>;

  beforeAll(async () => {
    env = await queueEnv(backend);
    api = await createProvisionerApiApp(provisionerTestSettings(env));
    await api.init();
    records = api.get(ImportRecordsRepository);
    imports = api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
    registrations = new Queue(STORAGE_REGISTRATION_QUEUE, imports.opts);
  });

  afterAll(async () => {
    for (const worker of workers) await worker.close();
    await registrations?.close();
    await api?.close();
  });

  it('writes only under the lock of the attempt holding the import, merging fields, never after it ended', async () => {
    const id = await addImport('DS-LOCKED');
    const token = 'attempt-token-1';
    const job = await take(IMPORTS_QUEUE, token);
    expect(job.id).toBe(id);
    const held: JobLock = { queue: IMPORTS_QUEUE, jobId: id, token };

    // Another worker's token (a stale attempt's): nothing is written.
    const stale = { ...held, token: 'attempt-token-0' };
    expect(await records.writeLocked(id, stale, { data: { first_started_at: 1 } })).toBe(false);
    expect(
      await records.writeLocked(id, stale, {
        progress: { files_done: 9, files_total: 9, bytes_done: 9, bytes_total: 9 },
      }),
    ).toBe(false);
    expect(await data(id)).toEqual({ source: 'dropzone', key: 'DS-LOCKED', path: 'p' });

    const progress = { files_done: 1, files_total: 2, bytes_done: 10, bytes_total: 20 };
    expect(await records.writeLocked(id, held, { progress })).toBe(true);
    expect(
      await records.writeLocked(id, held, {
        data: { catalog: { state: 'pending', accession: null, error: null } },
      }),
    ).toBe(true);
    expect(await records.writeLocked(id, held, { data: { first_started_at: 5 } })).toBe(true);
    expect((await imports.getJob(id))!.progress).toEqual(progress);
    // Fields merged: what another writer set stays.
    expect(await data(id)).toEqual({
      source: 'dropzone',
      key: 'DS-LOCKED',
      path: 'p',
      catalog: { state: 'pending', accession: null, error: null },
      first_started_at: 5,
    });

    await job.moveToCompleted({ path: 'p', files: 2, bytes: 20, copied: true }, token, false);
    expect(await records.writeLocked(id, held, { data: { first_started_at: 6 } })).toBe(false);
    expect((await data(id)).first_started_at).toBe(5);
  });

  it('lets a registration job write the state of a finished import under its own lock only', async () => {
    const id = await addImport('DS-REGISTERED');
    const attempt = await take(IMPORTS_QUEUE, 'attempt-token');
    await attempt.moveToCompleted(
      { path: 'p', files: 0, bytes: 0, copied: true },
      'attempt-token',
      false,
    );
    await registrations.add(
      'register',
      { import_id: id, path: 'p', published_on: '2026-11-23' },
      { jobId: `${id}-registration` },
    );
    const registration = await take(STORAGE_REGISTRATION_QUEUE, 'registration-token');
    const held: JobLock = {
      queue: STORAGE_REGISTRATION_QUEUE,
      jobId: registration.id!,
      token: 'registration-token',
    };
    const registered = { state: 'registered' as const, accession: 'ELU_I_1', error: null };
    expect(
      await records.writeLocked(
        id,
        { ...held, token: 'frozen-worker' },
        { data: { catalog: { state: 'pending', accession: null, error: null } } },
      ),
    ).toBe(false);
    expect(await records.writeLocked(id, held, { data: { catalog: registered } })).toBe(true);
    expect((await data(id)).catalog).toEqual(registered);
    // The import's own (ended) attempt can no longer write either.
    expect(
      await records.writeLocked(
        id,
        { queue: IMPORTS_QUEUE, jobId: id, token: 'attempt-token' },
        { data: { catalog: undefined } },
      ),
    ).toBe(false);
    expect((await data(id)).catalog).toEqual(registered);
  });

  it('refuses a write once the lock has lapsed without renewal, as BullMQ then hands the job on', async () => {
    const id = await addImport('DS-LAPSED');
    await take(IMPORTS_QUEUE, 'short-token', 300);
    const held: JobLock = { queue: IMPORTS_QUEUE, jobId: id, token: 'short-token' };
    const progress = { files_done: 0, files_total: 1, bytes_done: 0, bytes_total: 1 };
    expect(await records.writeLocked(id, held, { progress })).toBe(true);
    // Nothing renews it (no worker loop runs): the store itself must tell it lapsed.
    await until(
      async () => !(await records.writeLocked(id, held, { progress })),
      'the lock to lapse',
      10_000,
      50,
    );
    expect(await records.writeLocked(id, held, { data: { first_started_at: 7 } })).toBe(false);
    expect((await data(id)).first_started_at).toBeUndefined();
  });
});
