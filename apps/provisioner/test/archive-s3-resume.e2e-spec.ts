import type { S3Client } from '@aws-sdk/client-s3';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decrypt, generateKeyPair, secretKeyFile } from '@app/crypt4gh';
import { referenceDecrypt } from '../../../test/support/crypt4gh-reference';
import {
  queueEnv,
  startProvisionerApps,
  type ProvisionerTestApps,
} from '../../../test/support/provisioner-app';
import {
  createTestBucket,
  listKeys,
  removeTestBucket,
  s3StorageEnv,
  s3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';
import { bodyChecksumPath, headerPath } from '../src/storage/archive-storage';
import { parseProvenance } from '../src/storage/provenance';
import { storageFromSettings } from '../src/storage/storage.module';
import type { StorageSystem } from '../src/storage/storage-system';
import { digest, DropzoneFixture, tempDir } from './support/dropzone-fixture';
import {
  startDatasetImport,
  TERMINAL_STATES,
  waitForImport,
  waitForRecordedFiles,
} from './support/provisioner-e2e';
import { startWorkerProcess, WORKER_START_MS } from './support/worker-process';

const MiB = 1024 * 1024;
/**
 * Files of each dataset: enough that the first attempt records some before it is cut off (its
 * copy outlasts the journal's interval of a second, RECORD_INTERVAL_MS, on a quiet machine too:
 * with 40 files it was often published before a listing saw its journal), each above the size
 * read whole on the copy threads (so each streams through a lane), one segment and a bit more of
 * Crypt4GH.
 */
const FILES = 120;
const FILE_BYTES = MiB + 70_000;
/** A copy of 126 MiB encrypted into Swift on a loaded 2-core machine, twice. */
const COPY_WAIT_MS = 120_000;

jest.setTimeout(2 * WORKER_START_MS + 3 * COPY_WAIT_MS);

/**
 * Archive mode on S3 (a real Swift server), through a worker process killed (SIGKILL) or
 * stopped (SIGTERM) once its attempt has recorded files: the next attempt keeps the recorded
 * bodies, and every published file has its header and body checksum beside it, decrypts (our
 * reader, and the reference CLI for one) to its plain text and has that plain text's SHA-256 in
 * the provenance. Before the fix, S3 kept headers in memory until publication: kept bodies were
 * published without them.
 */
describe('archive mode on S3: a worker killed or stopped mid-import, resumed', () => {
  const base = tempDir('archive-s3-resume');
  const archive = generateKeyPair();
  const secretKeyPath = join(base, 'archive.sec');
  const plain: Record<string, Record<string, Buffer>> = {};
  let client: S3Client;
  let bucket: string;
  let apps: ProvisionerTestApps;
  let env: Record<string, string>;
  let storage: StorageSystem;
  const prefix = 'resume/';
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    const server = await s3TestServer();
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'archive-resume');
    writeFileSync(secretKeyPath, await secretKeyFile(archive.secretKey));
    const dropzone = new DropzoneFixture(join(base, 'dropzone')).submission('SUB-R', {
      project: 'PRJR',
      datasets: ['DS-KILL', 'DS-STOP'],
    });
    for (const id of ['DS-KILL', 'DS-STOP']) {
      plain[id] = Object.fromEntries(
        Array.from({ length: FILES }, (_, i) => [
          `part-${String(i).padStart(2, '0')}.bin`,
          randomBytes(FILE_BYTES),
        ]),
      );
      dropzone.dataset(id, { submission: 'SUB-R', files: plain[id] });
    }
    env = {
      ...(await queueEnv()),
      ...s3StorageEnv(server, bucket, prefix),
      S3_PART_BYTES: String(5 * MiB),
      STORAGE_ENCRYPTION: 'crypt4gh',
      C4GH_ARCHIVE_SECRET_KEY_FILE: secretKeyPath,
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone.root }]),
      // A killed worker's claim lapses soon, so the next one takes the import up again.
      IMPORT_LOCK_MS: '2000',
    };
    apps = await startProvisionerApps(env);
    // Imports run in worker processes of their own, which the tests kill or stop.
    await apps.worker.close();
    storage = storageFromSettings(apps.settings);
  });

  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
    await apps?.api.close();
    if (bucket) await removeTestBucket(client, bucket);
    client?.destroy();
  });

  const resumed = async (id: string, signal: NodeJS.Signals) => {
    const first = await startWorkerProcess(env);
    workers.push(first);
    const importId = await startDatasetImport(apps.api, 'dropzone', id);
    await waitForRecordedFiles(apps.api, importId, { client, bucket, prefix }, COPY_WAIT_MS);
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill(signal);
    await exited;
    const target = `projects/PRJR/SUB-R/data/raw/${id}`;
    // On a quiet machine the attempt can publish between the journal's listing and the signal;
    // then there is nothing to resume, and only what every published file must hold is checked.
    const interrupted = !(await storage.exists(target));
    if (!interrupted) process.stdout.write(`${id}: published before the ${signal} arrived\n`);

    const next = await startWorkerProcess(env);
    workers.push(next);
    const done = await waitForImport(apps.api, importId, TERMINAL_STATES, COPY_WAIT_MS);
    // Gone before the next test, whose import only its own worker may take.
    const gone = new Promise((resolve) => next.once('exit', resolve));
    next.kill('SIGKILL');
    await gone;
    expect(done).toMatchObject({ state: 'imported', error: null });
    const provenance = parseProvenance(
      await storage.readObject(`${target}/.provisioner/provenance.json`),
    )!;
    if (interrupted) {
      // A stop hands the import over without counting a failed attempt: the provenance counts both.
      expect(provenance.import.attempt).toBeGreaterThanOrEqual(2);
      expect(provenance.import.kept_from_earlier_attempts?.files).toBeGreaterThan(0);
    }
    const files = plain[id];
    const keys = (await listKeys(client, bucket, `${prefix}${target}/`)).map((key) =>
      key.slice(prefix.length + target.length + 1),
    );
    // Nothing else (Swift's listing may lag behind the last objects: each is read below).
    const expected = new Set([
      ...Object.keys(files).flatMap((path) => [path, headerPath(path), bodyChecksumPath(path)]),
      '.provisioner/manifest-sha256.txt',
      '.provisioner/provenance.json',
    ]);
    expect(keys.filter((key) => !expected.has(key))).toEqual([]);
    for (const [path, content] of Object.entries(files)) {
      const header = (await storage.readObject(`${target}/${headerPath(path)}`))!;
      const body = (await storage.readObject(`${target}/${path}`))!;
      const pieces: Buffer[] = [];
      for await (const piece of decrypt([body], [archive.secretKey], { header }))
        pieces.push(piece);
      expect(Buffer.concat(pieces).equals(content)).toBe(true);
      expect((await storage.readObject(`${target}/${bodyChecksumPath(path)}`))!.toString()).toBe(
        `${digest('sha256', body)}\n`,
      );
      expect(provenance.files.find((file) => file.path === path)).toEqual({
        path,
        size: content.length,
        sha256: digest('sha256', content),
      });
    }
    const [path, content] = Object.entries(files)[0];
    const header = (await storage.readObject(`${target}/${headerPath(path)}`))!;
    const body = (await storage.readObject(`${target}/${path}`))!;
    expect((await referenceDecrypt([header, body], secretKeyPath, base)).equals(content)).toBe(
      true,
    );
  };

  it('SIGKILL after files are recorded: the next attempt keeps them, and every published file decrypts to its plain text', async () => {
    await resumed('DS-KILL', 'SIGKILL');
  });

  it('SIGTERM after files are recorded: the stopped attempt hands over, and every published file decrypts to its plain text', async () => {
    await resumed('DS-STOP', 'SIGTERM');
  });
});
