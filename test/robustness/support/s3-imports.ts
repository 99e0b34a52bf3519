import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ImportRecord } from '../../../apps/provisioner/src/imports/import-record';
import { tempDir } from '../../../apps/provisioner/test/support/dropzone-fixture';
import {
  createTestBucket,
  listKeys,
  openUploads,
  removeTestBucket,
  s3TestServer,
  testS3Client,
  type S3TestServer,
} from '../../support/s3-server';
import { poll } from '../../support/wait';
import { startRig, type ProvisionerRig } from './provisioner-rig';
import { startRegistrationCatalog, type RegistrationCatalog } from './registration-catalog';

/** The provisioner's settings for imports into `bucket` on the run's S3 server. */
export function s3StorageEnv(server: S3TestServer, bucket: string): Record<string, string> {
  return {
    STORAGE_BACKEND: 's3',
    S3_ENDPOINT: server.endpoint,
    S3_REGION: server.region,
    S3_BUCKET: bucket,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: server.accessKeyId,
    S3_SECRET_ACCESS_KEY: server.secretAccessKey,
  };
}

/** A worker's own scratch directory (TMPDIR, STORAGE_ROOT), as each pod has its own. */
export function scratchEnv(base: string, name: string): Record<string, string> {
  const dir = join(base, `scratch-${name}`);
  mkdirSync(dir, { recursive: true });
  return { TMPDIR: dir, STORAGE_ROOT: join(dir, 'storage') };
}

/**
 * What "imported once, registered once" means on S3: every record registered in the catalog,
 * which holds exactly one storage location per import; every dataset's big file and commit
 * object in the bucket; no multipart upload left open.
 */
export async function expectStoredAndRegisteredOnce(
  rig: ProvisionerRig,
  catalog: RegistrationCatalog,
  s3: S3Client,
  bucket: string,
  records: ImportRecord[],
): Promise<void> {
  let registered: ImportRecord[] = [];
  await poll(
    async () => {
      registered = (await Promise.all(records.map((r) => rig.record(r.id)))).filter(
        (r): r is ImportRecord => r?.catalog?.state === 'registered',
      );
      return registered.length === records.length ? true : undefined;
    },
    'every import to be registered in the catalog',
    120_000,
    1000,
  );
  const perPath = await catalog.registrations(registered.map((r) => r.path));
  expect([...perPath.values()]).toEqual(registered.map(() => 1));
  const keys = new Set(await listKeys(s3, bucket));
  const unlisted = records.flatMap((r) =>
    [`${r.path}/big.bin`, `${r.path}/.provisioner/provenance.json`].filter((key) => !keys.has(key)),
  );
  // Swift's listings follow its writes asynchronously (an object server that cannot update the
  // container, e.g. on a nearly full disk, queues the update for its updater): an object the
  // listing does not show yet is asked for itself, as the import's own confirmation does.
  const missing: string[] = [];
  for (const key of unlisted) {
    const found = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
      () => true,
      (error: { name?: string }) => (error.name === 'NotFound' ? false : Promise.reject(error)),
    );
    if (!found) missing.push(key);
  }
  expect(missing).toEqual([]);
  expect(await openUploads(s3, bucket)).toEqual([]);
}

export interface S3ImportRun {
  /** The run's own directory (drop zone, scratch, servers' files), removed by close(). */
  base: string;
  /**
   * Starts the catalog, a bucket of the run's own and the provisioner API (the rig) with `env`
   * plus the S3 and registration settings.
   */
  start(env: Record<string, string>): Promise<{
    rig: ProvisionerRig;
    catalog: RegistrationCatalog;
    s3: S3Client;
    bucket: string;
  }>;
  /** Stops what start() started, removes the bucket and the directory. */
  close(): Promise<void>;
}

/** The set-up of a fault test that imports into S3 and registers in the real catalog. */
export function s3ImportRun(label: string): S3ImportRun {
  const base = tempDir(label);
  let rig: ProvisionerRig | undefined;
  let catalog: RegistrationCatalog | undefined;
  let s3: S3Client | undefined;
  let bucket: string | undefined;
  return {
    base,
    async start(env) {
      catalog = await startRegistrationCatalog();
      const server = await s3TestServer();
      s3 = testS3Client(server);
      bucket = await createTestBucket(s3, label.replace(/^robust-/, ''));
      rig = await startRig({ ...env, ...s3StorageEnv(server, bucket), ...catalog.env });
      return { rig, catalog, s3, bucket };
    },
    async close() {
      await rig?.close();
      await catalog?.close();
      if (s3 && bucket) await removeTestBucket(s3, bucket).catch(() => undefined);
      s3?.destroy();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
