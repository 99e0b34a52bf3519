import type { S3Client } from '@aws-sdk/client-s3';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { encrypt, generateKeyPair, secretKeyFile } from '@app/crypt4gh';
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
  type S3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';
import { until } from '../../../test/support/wait';
import { DEFAULT_SOURCE_LIMITS } from '../src/config/source-config';
import type { ValidatorConfig } from '../src/config/validator-config';
import { runDatasetImport } from '../src/import-pipeline/dataset-import-pipeline';
import { ImportRejectedError, ImportStoppedError } from '../src/import-pipeline/import-errors';
import { ValidatorWorkArea } from '../src/import-pipeline/validation/validator-work-area';
import { DropzoneSource } from '../src/sources/dropzone/dropzone.source';
import { closeSourceScanner, sourceScanner } from '../src/sources/source-system';
import { parseProvenance } from '../src/storage/provenance';
import { S3Storage } from '../src/storage/s3/s3-storage';
import type { StorageSystem } from '../src/storage/storage-system';
import { digest, DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { running } from './support/process-state';
import { startDatasetImport, waitForImport } from './support/provisioner-e2e';

const MiB = 1024 * 1024;
/** Swift starts in ~5 s (~45 s when its packages are installed first); two apps boot besides. */
jest.setTimeout(240_000);

/**
 * Validators where the staged files are not plain files on this host (issue 60, item 3): with S3
 * storage and in archive mode (Crypt4GH at rest, on S3), each validator reads a copy of the
 * dataset's verified bytes in the worker's work directory (VALIDATOR_WORK_DIR), removed
 * afterwards, bounded (VALIDATOR_WORK_MAX_BYTES); a stop while one runs kills it, and the next
 * attempt validates again. Real Swift s3api server, real validator processes.
 */
describe('validators with S3 storage and in archive mode', () => {
  const base = tempDir('validators-s3');
  const seen = join(base, 'seen');
  const work = join(base, 'work');
  const archive = generateKeyPair();
  let server: S3TestServer;
  let client: S3Client;
  let bucket: string;
  let s3: S3Storage;
  /** The archive-mode worker's objects, read as they are stored (no decryption). */
  let stored: S3Storage;
  const PLAIN = {
    'reads/a.txt': 'alpha: plain text that must never reach the bucket\n',
    'b.bin': '',
  };

  /**
   * A validator that records what it saw (where its data is, each file's mode and sha256) under
   * seen/<label>, then passes or fails (its message naming reads/a.txt); `hang` makes its first
   * run sleep until killed.
   */
  const validator = (
    label: string,
    verdict: 'passed' | 'failed',
    hang = false,
  ): ValidatorConfig => {
    const dir = join(seen, label);
    mkdirSync(dir, { recursive: true });
    const script = join(base, `${label}.sh`);
    writeFileSync(
      script,
      `#!/bin/sh
echo run >> "${dir}/runs"
d=$(readlink -f "$1/data"); echo "$d" > "${dir}/data"
(cd "$d" && find . -type f -printf '%m %P\\n' | sort) > "${dir}/modes"
(cd "$d" && find . -type f | sort | xargs sha256sum) > "${dir}/sums"
${hang ? `if [ ! -e "${dir}/hung" ]; then touch "${dir}/hung"; echo $$ > "${dir}/pid"; exec sleep 600; fi` : ''}
cat > "$2/result.json" <<EOF
{"result":"${verdict}","messages":[],"files":[{"path":"$1/data/reads/a.txt","result":"${verdict}","messages":[{"level":"error","time":"2026-01-01T00:00:00Z","message":"${label}: not a valid read file"}]}]}
EOF
`,
    );
    chmodSync(script, 0o755);
    return {
      name: label,
      command: [script, '{input}', '{output}'],
      container: false,
      mode: 'files',
      timeout_ms: 60_000,
      memory_mb: 512,
    };
  };
  const seenOf = (label: string, what: string): string =>
    readFileSync(join(seen, label, what), 'utf8');
  /** What the validator saw: each file's mode and checksum. */
  const sawPlain = (label: string, files: Record<string, string>) => {
    const paths = Object.keys(files).sort();
    expect(seenOf(label, 'modes').trim().split('\n')).toEqual(paths.map((p) => `444 ${p}`));
    expect(seenOf(label, 'sums').trim().split('\n')).toEqual(
      paths.map((p) => `${digest('sha256', files[p])}  ./${p}`),
    );
    // In the work directory, and gone with everything else of the validation.
    expect(seenOf(label, 'data').startsWith(`${work}/provisioner-validator-`)).toBe(true);
    expect(readdirSync(work)).toEqual([]);
  };
  const dropzone = (name: string, datasets: Record<string, Record<string, string | Buffer>>) => {
    const fixture = new DropzoneFixture(join(base, 'dropzones', name)).submission(`SUB-${name}`, {
      project: 'PRJV',
      datasets: Object.keys(datasets),
    });
    for (const [id, files] of Object.entries(datasets))
      fixture.dataset(id, { submission: `SUB-${name}`, files });
    return fixture.root;
  };
  const importDataset = (
    storage: StorageSystem,
    root: string,
    datasetId: string,
    validators: ValidatorConfig[],
    options: { attempt?: number; maxBytes?: number; signal?: AbortSignal } = {},
  ) =>
    runDatasetImport({
      importId: `dropzone-dataset-${datasetId}`,
      attempt: options.attempt ?? 1,
      queuedAt: null,
      source: new DropzoneSource({
        name: 'dropzone',
        type: 'dropzone',
        root,
        importable_statuses: ['completed'],
      }),
      storage,
      datasetId,
      versions: { provisioner: 'test' },
      reportProgress: () => Promise.resolve(),
      sourceLimits: DEFAULT_SOURCE_LIMITS,
      validators,
      validatorWork: new ValidatorWorkArea(work, options.maxBytes ?? 64 * MiB),
      signal: options.signal,
      recentChangeMs: 0,
    });
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('the import published');
      },
      (error: unknown) => error as ImportRejectedError,
    );
  const target = (name: string, datasetId: string) =>
    `projects/PRJV/SUB-${name}/data/raw/${datasetId}`;

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    server = await s3TestServer();
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'validators');
    const options = { bucket, partBytes: 5 * MiB, uploadConcurrency: 3 };
    s3 = new S3Storage(client, { ...options, prefix: 'plain/' });
    stored = new S3Storage(client, { ...options, prefix: 'archive/' });
    await sourceScanner().start();
  });

  afterAll(async () => {
    await closeSourceScanner();
    if (bucket) await removeTestBucket(client, bucket);
    client?.destroy();
  });

  describe('S3 storage', () => {
    it('a passing validator reads the verified bytes (read-only, in the work directory, removed); the provenance names it', async () => {
      const root = dropzone('s3-pass', { 'DS-PASS': PLAIN });
      const result = await importDataset(s3, root, 'DS-PASS', [validator('s3-pass', 'passed')]);
      sawPlain('s3-pass', PLAIN);
      const provenance = parseProvenance(
        await s3.readObject(`${result.path}/.provisioner/provenance.json`),
      )!;
      expect(provenance.validation).toEqual({
        validators: [{ name: 's3-pass', result: 'passed', data: 'copied' }],
      });
      expect((await s3.readObject(`${result.path}/reads/a.txt`))!.toString()).toBe(
        PLAIN['reads/a.txt'],
      );
    });

    it('a failing validator refuses the import with its message; nothing is published, the work directory is empty', async () => {
      const root = dropzone('s3-fail', { 'DS-FAIL': PLAIN });
      const error = await rejection(
        importDataset(s3, root, 'DS-FAIL', [validator('s3-fail', 'failed')]),
      );
      expect(error).toBeInstanceOf(ImportRejectedError);
      expect(error.code).toBe('validation_failed');
      expect(error.details).toEqual([
        {
          code: 'validation_error',
          path: 'reads/a.txt',
          message: 's3-fail: s3-fail: not a valid read file',
        },
      ]);
      sawPlain('s3-fail', PLAIN);
      expect(await s3.exists(target('s3-fail', 'DS-FAIL'))).toBe(false);
    });

    it('a dataset larger than VALIDATOR_WORK_MAX_BYTES is refused before anything is copied for the validator', async () => {
      const root = dropzone('s3-large', { 'DS-LARGE': { 'big.bin': 'x'.repeat(4096) } });
      const error = await rejection(
        importDataset(s3, root, 'DS-LARGE', [validator('s3-large', 'passed')], { maxBytes: 4095 }),
      );
      expect([error.code, error.message]).toEqual([
        'validation_too_large',
        "the dataset's 4096 bytes are more than the validators' work directory takes (VALIDATOR_WORK_MAX_BYTES=4095)",
      ]);
      expect(existsSync(join(seen, 's3-large', 'runs'))).toBe(false);
      expect(readdirSync(work)).toEqual([]);
    });

    it('a stop (SIGTERM) while a validator runs kills it and hands the import over; the next attempt validates again', async () => {
      const root = dropzone('s3-stop', { 'DS-STOP': PLAIN });
      const hanging = validator('s3-stop', 'passed', true);
      const stop = new AbortController();
      const first = importDataset(s3, root, 'DS-STOP', [hanging], { signal: stop.signal });
      first.catch(() => undefined);
      const pidFile = join(seen, 's3-stop', 'pid');
      await until(
        () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'),
        'the validator to start',
        60_000,
      );
      const pid = Number(readFileSync(pidFile, 'utf8'));
      expect(running(pid)).toBe(true);
      stop.abort();
      await expect(first).rejects.toBeInstanceOf(ImportStoppedError);
      expect(running(pid)).toBe(false);
      expect(readdirSync(work)).toEqual([]);
      expect(await s3.exists(target('s3-stop', 'DS-STOP'))).toBe(false);
      const result = await importDataset(s3, root, 'DS-STOP', [hanging], { attempt: 2 });
      expect(seenOf('s3-stop', 'runs')).toBe('run\nrun\n');
      sawPlain('s3-stop', PLAIN);
      expect(result.path).toBe(target('s3-stop', 'DS-STOP'));
    });
  });

  describe('archive mode on S3 (STORAGE_ENCRYPTION=crypt4gh), through the worker', () => {
    let apps: ProvisionerTestApps;
    const importOf = async (source: string, datasetId: string) =>
      waitForImport(
        apps.api,
        await startDatasetImport(apps.api, source, datasetId),
        undefined,
        60_000,
      );
    const sources: object[] = [];
    const source = (name: string, files: Record<string, string | Buffer>, v: ValidatorConfig) =>
      sources.push({
        name,
        type: 'dropzone',
        root: dropzone(name, { [`DS-${name.toUpperCase()}`]: files }),
        validators: [{ name: v.name, command: v.command, timeout_ms: 60_000 }],
      });

    beforeAll(async () => {
      const deposited: Buffer[] = [];
      for await (const part of encrypt([Buffer.from('sealed\n')], [archive.publicKey]))
        deposited.push(part);
      source('archpass', PLAIN, validator('archpass', 'passed'));
      source('archfail', PLAIN, validator('archfail', 'failed'));
      source(
        'archsealed',
        { 'x.bin.c4gh': Buffer.concat(deposited) },
        validator('archsealed', 'passed'),
      );
      const keyFile = join(base, 'archive.sec');
      writeFileSync(keyFile, await secretKeyFile(archive.secretKey));
      apps = await startProvisionerApps({
        ...(await queueEnv()),
        ...s3StorageEnv(server, bucket, 'archive/'),
        S3_PART_BYTES: String(5 * MiB),
        STORAGE_ENCRYPTION: 'crypt4gh',
        C4GH_ARCHIVE_SECRET_KEY_FILE: keyFile,
        SOURCES: JSON.stringify(sources),
        VALIDATOR_WORK_DIR: work,
        VALIDATOR_WORK_MAX_BYTES: String(MiB),
      });
    });

    afterAll(async () => {
      await apps?.close();
    });

    it('a passing validator reads the plain text in the work directory only; the bucket holds no plain byte', async () => {
      const record = await importOf('archpass', 'DS-ARCHPASS');
      expect(record.state).toBe('imported');
      sawPlain('archpass', PLAIN);
      const keys = await listKeys(client, bucket, 'archive/');
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const object = (await stored.readObject(key.slice('archive/'.length)))!;
        expect(object.includes(Buffer.from('plain text that must never'))).toBe(false);
      }
      const provenance = parseProvenance(
        await stored.readObject(
          `${target('archpass', 'DS-ARCHPASS')}/.provisioner/provenance.json`,
        ),
      )!;
      expect([provenance.encryption?.format, provenance.validation]).toEqual([
        'crypt4gh',
        { validators: [{ name: 'archpass', result: 'passed', data: 'copied' }] },
      ]);
    });

    it('a failing validator: the import is rejected with its message in the record', async () => {
      const record = await importOf('archfail', 'DS-ARCHFAIL');
      expect(record.state).toBe('rejected');
      expect(record.error).toEqual({
        code: 'validation_failed',
        message:
          'validator "archfail" refused the dataset: reads/a.txt: archfail: archfail: not a valid read file',
        details: [
          {
            code: 'validation_error',
            path: 'reads/a.txt',
            message: 'archfail: archfail: not a valid read file',
          },
        ],
      });
      sawPlain('archfail', PLAIN);
      expect(await stored.exists(target('archfail', 'DS-ARCHFAIL'))).toBe(false);
    });

    it('a file deposited encrypted is never decrypted onto a disk for a validator: the import is refused', async () => {
      const record = await importOf('archsealed', 'DS-ARCHSEALED');
      expect(record.state).toBe('rejected');
      expect(record.error?.code).toBe('validation_unavailable');
      expect(record.error?.details).toEqual([
        {
          code: 'validation_unavailable',
          path: 'x.bin.c4gh',
          message: 'deposited encrypted: the source has validators, which need the plain text',
        },
      ]);
      expect(existsSync(join(seen, 'archsealed', 'runs'))).toBe(false);
      expect(readdirSync(work)).toEqual([]);
    });
  });
});
