import type { S3Client } from '@aws-sdk/client-s3';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { queueEnv, TEST_WRITE_KEY } from '../../../../test/support/provisioner-app';
import type { ImportRecord } from '../../src/imports/import-record';
import { listKeys } from '../../../../test/support/s3-server';
import { poll } from '../../../../test/support/wait';
import type { DropzoneFixture } from './dropzone-fixture';

export const TERMINAL_STATES = ['imported', 'failed', 'rejected'];

/**
 * How long an import of a few small files may take on a loaded 2-core machine; under the e2e
 * project's 30 s test time-out, so a stuck import fails naming itself. Large copies pass more.
 */
export const IMPORT_WAIT_MS = 25_000;

/** The import's record, or undefined while it is not yet listed (or the request failed). */
async function importRecord(
  api: NestExpressApplication,
  id: string,
): Promise<ImportRecord | undefined> {
  const res = await request(api.getHttpServer())
    .get(`/imports/${encodeURIComponent(id)}`)
    .set('X-API-Key', TEST_WRITE_KEY);
  return res.status === 200 ? (res.body as ImportRecord) : undefined;
}

/** Asks the API to import a dataset of a source (202 expected); returns the import's id. */
export async function startDatasetImport(
  api: NestExpressApplication,
  source: string,
  datasetId: string,
): Promise<string> {
  const res = await request(api.getHttpServer())
    .post(`/datasets/${source}/import`)
    .set('X-API-Key', TEST_WRITE_KEY)
    .send({ dataset_id: datasetId });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** Polls an import until it ends (reaches one of `states`); throws after `timeoutMs`. */
export async function waitForImport(
  api: NestExpressApplication,
  id: string,
  states = TERMINAL_STATES,
  timeoutMs = IMPORT_WAIT_MS,
): Promise<ImportRecord> {
  return poll(
    async () => {
      const record = await importRecord(api, id);
      return record && states.includes(record.state) ? record : undefined;
    },
    `import ${id} to reach ${states.join(' or ')}`,
    timeoutMs,
    50,
  );
}

/**
 * Settings for apps that import from one drop-zone source into `storageRoot`, on a queue of
 * their own; `extra` adds or overrides settings.
 */
export async function dropzoneEnv(
  dropzone: DropzoneFixture,
  storageRoot: string,
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  return {
    ...(await queueEnv()),
    SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone.root }]),
    STORAGE_ROOT: storageRoot,
    ...extra,
  };
}

/**
 * Polls an import until `predicate` holds while it is still copying: for tests that act in the
 * middle of a copy, a copy that already finished means the test can no longer check anything.
 */
export async function waitWhileCopying(
  api: NestExpressApplication,
  id: string,
  predicate: (record: ImportRecord) => boolean,
  timeoutMs = IMPORT_WAIT_MS,
): Promise<ImportRecord> {
  return poll(
    async () => {
      const record = await importRecord(api, id);
      if (record && predicate(record)) return record;
      if (record?.state === 'imported')
        throw new Error('the copy finished before the test could act');
      return undefined;
    },
    `import ${id} to reach the state the test acts in`,
    timeoutMs,
    20,
  );
}

/**
 * Waits, while import `id` is still copying into S3 storage (`bucket`, under `prefix`), until
 * its attempt has recorded copied files in its staging journal: what a test that kills or stops
 * the worker needs, so the next attempt has something to keep. A copy that ends within the
 * journal's interval (a second; stage-files.step.ts, RECORD_INTERVAL_MS) records its files only
 * as it finishes, and its staging area is gone at publication, often before a listing sees the
 * segment: the wait then ends once the import is no longer running, and the test finds the
 * dataset published.
 */
export async function waitForRecordedFiles(
  api: NestExpressApplication,
  id: string,
  s3: { client: S3Client; bucket: string; prefix: string },
  timeoutMs: number,
): Promise<void> {
  await waitWhileCopying(
    api,
    id,
    (r) => r.state === 'running' && r.progress.files_done > 0,
    timeoutMs,
  );
  await poll(
    async () =>
      // Segment 0 names what the attempt kept (nothing); segment 1 is its first copied files.
      (await listKeys(s3.client, s3.bucket, `${s3.prefix}.staging/`)).some((k) =>
        k.endsWith('/journal-00000001.jsonl'),
      ) ||
      (await importRecord(api, id))?.state !== 'running' ||
      undefined,
    'a journal segment of the staging area, or the import ended',
    timeoutMs,
    20,
  );
}

/** The text of every file under a directory (storage): what must never hold a leaked secret. */
export function everyFileText(root: string): string {
  if (!existsSync(root)) return '';
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'latin1'))
    .join('\n');
}
