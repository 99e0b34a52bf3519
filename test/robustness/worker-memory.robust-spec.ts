import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import type { ImportRecord } from '../../apps/provisioner/src/imports/import-record';
import { queueEnv } from '../support/provisioner-app';
import { poll } from '../support/wait';
import { ProvisionerRig, startRig } from './support/provisioner-rig';

/** Files per directory of a generated payload (hard links to one small file per directory). */
const PER_DIRECTORY = 1000;
/** A worker's budget here (IMPORT_MAX_FILES), below the default so that the two exceed it. */
const MAX_FILES = 200_000;
/** Together over MAX_FILES: the second must wait for the first. */
const LARGE = 190_000;
const SMALL = 60_000;

const digest = (algorithm: string) => createHash(algorithm).update('').digest('hex');

/**
 * A dataset of `count` empty files listed in both manifests, cheap to write and to copy: every
 * file is a hard link (a file like any other to the provisioner) to one file per directory.
 */
function manyFiles(fixture: DropzoneFixture, id: string, count: number, seeds: string): void {
  fixture.dataset(id, { submission: 'SUB-MANY', files: {}, manifests: ['sha256', 'md5'] });
  const dir = fixture.datasetDir(id);
  const sha256: string[] = [];
  const md5: string[] = [];
  for (let d = 0; d < count / PER_DIRECTORY; d++) {
    mkdirSync(join(dir, 'payload', `dir-${d}`));
    const seed = join(seeds, `${id}-${d}`);
    writeFileSync(seed, '');
    for (let f = 0; f < PER_DIRECTORY; f++) {
      const path = `dir-${d}/file-with-a-moderately-long-name-${f}.dat`;
      linkSync(seed, join(dir, 'payload', path));
      sha256.push(`${digest('sha256')}  ${path}\n`);
      md5.push(`${digest('md5')}  ${path}\n`);
    }
  }
  writeFileSync(join(dir, 'manifest-sha256.txt'), sha256.join(''));
  writeFileSync(join(dir, 'manifest-md5.txt'), md5.join(''));
}

/**
 * Large manifests, many files (what took a worker to 754 of its 768 MiB): two datasets of
 * 190,000 and 60,000 files, both manifests each, imported by one worker at its default
 * concurrency of two. Each file of a running import costs memory until it is published, so the
 * worker admits no more files at once than IMPORT_MAX_FILES: the second import waits for the
 * first, and the worker (heap capped as deployed) stays under 75 % of its limit (checked after
 * the file by support/memory-limits.ts).
 */
describe('a worker importing datasets of many files', () => {
  // In memory where there is some (the hostile drop zone's way): 520,000 empty files and links
  // cost inodes only, written and copied in a fraction of the time a busy disk takes.
  const base = existsSync('/dev/shm')
    ? mkdtempSync('/dev/shm/prov-robust-many-')
    : tempDir('robust-many-files');
  let rig: ProvisionerRig;

  beforeAll(async () => {
    const fixture = new DropzoneFixture(join(base, 'dropzone'));
    fixture.submission('SUB-MANY', { project: 'P1', datasets: ['DS-LARGE', 'DS-SMALL'] });
    mkdirSync(join(base, 'seeds'));
    const started = performance.now();
    manyFiles(fixture, 'DS-LARGE', LARGE, join(base, 'seeds'));
    manyFiles(fixture, 'DS-SMALL', SMALL, join(base, 'seeds'));
    process.stdout.write(`many files: written in ${(performance.now() - started).toFixed(0)} ms\n`);
    rig = await startRig({
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: fixture.root }]),
      STORAGE_ROOT: join(base, 'storage'),
      IMPORT_MAX_FILES: String(MAX_FILES),
    });
  });

  afterAll(async () => {
    await rig?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('imports both, one after the other, within the memory line', async () => {
    await rig.startWorker();
    const started = performance.now();
    const queued = await Promise.all(['DS-LARGE', 'DS-SMALL'].map((id) => rig.importDataset(id)));
    expect(queued.map((q) => q.status)).toEqual([202, 202]);
    const ids = queued.map((q) => q.record.id);
    /** Imports past their admission (their progress names their files) and not ended. */
    const copying = (records: (ImportRecord | undefined)[]) =>
      records.filter((r) => r?.state === 'running' && r.progress.files_total > 0).length;
    let mostAtOnce = 0;
    const records = await poll(
      async () => {
        const now = await Promise.all(ids.map((id) => rig.record(id)));
        mostAtOnce = Math.max(mostAtOnce, copying(now));
        return now.every((r) => r && ['imported', 'failed', 'rejected'].includes(r.state))
          ? (now as ImportRecord[])
          : undefined;
      },
      'both imports to end',
      600_000,
      100,
    );
    process.stdout.write(
      `many files: ${LARGE} + ${SMALL} files imported in ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
    );
    expect(records.map((r) => [r.key, r.state, r.error])).toEqual([
      ['DS-LARGE', 'imported', null],
      ['DS-SMALL', 'imported', null],
    ]);
    expect(records.map((r) => r.progress.files_done)).toEqual([LARGE, SMALL]);
    expect(mostAtOnce).toBe(1);
  });
});
