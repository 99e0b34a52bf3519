import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { queueEnv, TEST_WRITE_KEY } from '../../../../test/support/provisioner-app';
import type { ImportRecord } from '../../src/imports/import-record';
import type { DropzoneFixture } from './dropzone-fixture';

export const TERMINAL_STATES = ['imported', 'failed', 'rejected'];

/** Polls an import until it ends (or the test's own time-out stops it). */
export async function waitForImport(
  api: NestExpressApplication,
  id: string,
  states = TERMINAL_STATES,
): Promise<ImportRecord> {
  for (;;) {
    const res = await request(api.getHttpServer())
      .get(`/imports/${encodeURIComponent(id)}`)
      .set('X-API-Key', TEST_WRITE_KEY);
    if (res.status === 200 && states.includes((res.body as ImportRecord).state))
      return res.body as ImportRecord;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
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
): Promise<ImportRecord> {
  for (;;) {
    const res = await request(api.getHttpServer())
      .get(`/imports/${id}`)
      .set('X-API-Key', TEST_WRITE_KEY);
    const record = res.body as ImportRecord;
    if (res.status === 200 && predicate(record)) return record;
    if (res.status === 200 && record.state === 'imported')
      throw new Error('the copy finished before the test could act');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The text of every file under a directory (storage): what must never hold a leaked secret. */
export function everyFileText(root: string): string {
  if (!existsSync(root)) return '';
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'latin1'))
    .join('\n');
}
