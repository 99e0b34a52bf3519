import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DropzoneFixture } from '../../apps/provisioner/test/support/dropzone-fixture';
import type { ImportRecord } from '../../apps/provisioner/src/imports/import-record';
import { listKeys, openUploads } from '../support/s3-server';
import { queueEnv } from '../support/provisioner-app';
import { poll } from '../support/wait';
import { CATALOG_PROJECT } from './support/registration-catalog';
import { s3ImportRun, scratchEnv } from './support/s3-imports';

/** Files of the dataset: its stored manifest (about 270 bytes a line) spans three 5 MiB parts. */
const FILES = 40_000;
const PER_DIRECTORY = 1000;
const PART_BYTES = 5 * 1024 * 1024;
const LONG_NAME = `a-file-name-long-enough-to-make-the-manifest-span-several-parts-${'x'.repeat(130)}`;

const emptySha256 = createHash('sha256').update('').digest('hex');

function peakBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/**
 * One dataset of 40,000 (empty, hard-linked) files imported into S3 on Swift with 5 MiB parts: its
 * stored manifest and provenance each go up in several parts. The worker is SIGKILLed between the
 * flush and the commit (the provenance's parts sent, its upload not completed); the next worker
 * takes the import over, keeps every file, and publishes a manifest and provenance of its own.
 */
// Minutes on a loaded 2-core machine: 40,000 objects at a few ms each into Swift.
jest.setTimeout(1_500_000);

describe('an import of many objects into S3, its worker killed before the commit', () => {
  const run = s3ImportRun('robust-s3-many');
  afterAll(() => run.close());

  it('publishes once, complete, after the kill; the commit object was never visible half-written', async () => {
    const { base } = run;
    const fixture = new DropzoneFixture(join(base, 'dropzone'));
    fixture.submission('SUB-MANY-S3', { project: CATALOG_PROJECT, datasets: ['DS-MANY'] });
    fixture.dataset('DS-MANY', { submission: 'SUB-MANY-S3', files: {}, manifests: ['sha256'] });
    const dir = fixture.datasetDir('DS-MANY');
    const lines: string[] = [];
    for (let d = 0; d < FILES / PER_DIRECTORY; d++) {
      mkdirSync(join(dir, 'payload', `dir-${d}`));
      const seed = join(base, `seed-${d}`);
      writeFileSync(seed, '');
      for (let f = 0; f < PER_DIRECTORY; f++) {
        const path = `dir-${d}/${LONG_NAME}-${f}.dat`;
        linkSync(seed, join(dir, 'payload', path));
        lines.push(`${emptySha256}  ${path}\n`);
      }
    }
    writeFileSync(join(dir, 'manifest-sha256.txt'), lines.join(''));

    const { rig, s3, bucket } = await run.start({
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: fixture.root }]),
      S3_PART_BYTES: String(PART_BYTES),
      // A dead worker's claim lapses after 3 s, so its import is taken up again quickly.
      IMPORT_LOCK_MS: '3000',
      IMPORT_MAX_ATTEMPTS: '5',
    });
    const first = await rig.spawnWorker(scratchEnv(base, 'first'));
    await first.ready;
    const queued = await rig.importDataset('DS-MANY');
    expect(queued.status).toBe(202);
    const id = queued.record.id;

    // The provenance's parts are sent and its upload is open: flushed, not yet committed.
    const provenanceUpload = await poll(
      async () => {
        const record = await rig.record(id);
        if (record && record.state !== 'running' && record.state !== 'queued')
          throw new Error(`the import ended (${record.state}) before the kill`);
        const open = await openUploads(s3, bucket);
        return open.find((key) => key.endsWith('/.provisioner/provenance.json'));
      },
      'the provenance upload to be open',
      900_000,
      50,
    );
    const firstPeak = peakBytes(first.child.pid!);
    first.child.kill('SIGKILL');
    await first.exited;
    // Never visible: its parts are not an object until the upload is completed.
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: bucket, Key: provenanceUpload })),
    ).rejects.toMatchObject({ name: 'NotFound' });

    const second = await rig.spawnWorker(scratchEnv(base, 'second'));
    await second.ready;
    const record = await poll(
      async () => {
        const now = await rig.record(id);
        return now && ['imported', 'failed', 'rejected'].includes(now.state)
          ? (now as ImportRecord)
          : undefined;
      },
      'the import to end',
      900_000,
      200,
    );
    const secondPeak = peakBytes(second.child.pid!);
    process.stdout.write(
      `s3 many objects: ${FILES} files, worker peaks ${Math.round(firstPeak / 2 ** 20)} MiB (killed) and ${Math.round(secondPeak / 2 ** 20)} MiB (took over)\n`,
    );
    expect([record.state, record.error]).toEqual(['imported', null]);
    expect(record.progress.files_done).toBe(FILES);

    const get = async (key: string) => {
      const answer = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return { etag: answer.ETag!, body: Buffer.from(await answer.Body!.transformToByteArray()) };
    };
    const manifest = await get(`${record.path}/.provisioner/manifest-sha256.txt`);
    expect(manifest.etag).toMatch(/-3"$/);
    expect(manifest.body.toString('utf8')).toBe([...lines].sort().join(''));
    const provenance = await get(`${record.path}/.provisioner/provenance.json`);
    expect(provenance.etag).toMatch(/-\d+"$/);
    const document = JSON.parse(provenance.body.toString('utf8')) as {
      import: { attempt: number };
      files: { path: string; sha256: string }[];
    };
    expect(document.import.attempt).toBeGreaterThan(1);
    expect(document.files).toHaveLength(FILES);
    expect(document.files.every((file) => file.sha256 === emptySha256)).toBe(true);
    expect(await openUploads(s3, bucket)).toEqual([]);
    expect(await listKeys(s3, bucket, '.staging/')).toEqual([]);
    expect((await listKeys(s3, bucket, `${record.path}/`)).length).toBe(FILES + 2);
  });
});
