import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { queueEnv } from '../support/provisioner-app';
import {
  createTestBucket,
  listKeys,
  openUploads,
  removeTestBucket,
  s3TestServer,
  testS3Client,
} from '../support/s3-server';
import { until } from '../support/wait';
import {
  drainDuringImport,
  killDuringImport,
  mib,
  s3Probe,
  settled,
  writeDrainDataset,
} from './support/drain-scenario';
import { PROJECT, ProvisionerRig, startRig, SUBMISSION } from './support/provisioner-rig';

const MiB = 1024 * 1024;
/** Six files of 16 MiB in parts of 5 MiB: a stop lands between and inside their uploads. */
const FILES = 6;
const FILE = 16 * MiB;
const PART = 5 * MiB;
const UPLOADS = 4;
const TOTAL = FILES * FILE + 'DS-TERM\n'.length;
const PREFIX = 'drain/';
const target = (id: string): string => `projects/${PROJECT}/${SUBMISSION}/data/raw/${id}`;

/**
 * The drains of provisioner-drain.e2e-spec.ts with S3 storage (the real Swift): a SIGTERM hands
 * the import over and the next worker keeps every object the stopped one confirmed and resumes
 * its open multipart uploads, sending only the parts the server does not hold; a SIGKILL loses
 * only what was not yet recorded. Each import is committed once, complete.
 */
describe('imports into S3 survive drains (SIGTERM) and crashes (SIGKILL) of their worker', () => {
  let rig: ProvisionerRig;
  let client: S3Client;
  let bucket: string;
  const base = tempDir('robust-drain');
  const dropzone = join(base, 'dropzone');

  afterAll(async () => {
    await rig?.close();
    if (bucket) await removeTestBucket(client, bucket);
    client?.destroy();
    rmSync(base, { recursive: true, force: true });
  });

  const provenance = async (id: string) => {
    const answer = await client.send(
      new GetObjectCommand({
        Bucket: bucket,
        Key: `${PREFIX}${target(id)}/.provisioner/provenance.json`,
      }),
    );
    return JSON.parse(await answer.Body!.transformToString());
  };

  it('resumes on another worker keeping the confirmed objects and parts, and commits each import once', async () => {
    const server = await s3TestServer();
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'drain');
    const written = [
      writeDrainDataset(dropzone, 'DS-TERM', FILES, FILE, []),
      writeDrainDataset(dropzone, 'DS-KILL', FILES, FILE, ['DS-TERM']),
    ];
    rig = await startRig({
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone }]),
      STORAGE_BACKEND: 's3',
      S3_ENDPOINT: server.endpoint,
      S3_REGION: server.region,
      S3_BUCKET: bucket,
      S3_PREFIX: PREFIX,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: server.accessKeyId,
      S3_SECRET_ACCESS_KEY: server.secretAccessKey,
      S3_PART_BYTES: String(PART),
      S3_UPLOAD_CONCURRENCY: String(UPLOADS),
      // One lock length for every worker (see provisioner-drain.e2e-spec.ts).
      IMPORT_LOCK_MS: '5000',
    });
    const first = await rig.startWorker({ LOG_LEVEL: 'info' });
    await settled(Math.max(...written));

    const termProbe = s3Probe(client, bucket, PREFIX, target('DS-TERM'));
    const term = await drainDuringImport(rig, {
      datasetId: 'DS-TERM',
      totalBytes: TOTAL,
      worker: first,
      probe: termProbe,
      // The import's own progress: the server's listings may lag behind what it holds.
      when: (record) => Promise.resolve(record.progress.bytes_done >= TOTAL / 3),
      next: () => rig.startWorker({ LOG_LEVEL: 'info' }),
      provenance,
      timeoutMs: 120_000,
    });
    process.stdout.write(
      `drain (S3): SIGTERM at ${term.atPercent} %: exit ${term.exitCode} after ${term.drainMs} ms, ` +
        `${mib(term.copiedAgain)} sent again, attempt ${term.attempts}\n`,
    );
    expect(term.exitCode).toBe(0);
    expect(term.stateAfterExit).toBe('queued');
    // Every confirmed object and part is kept: at most the parts the server had not listed yet.
    expect(term.copiedAgain).toBeLessThanOrEqual(UPLOADS * PART);
    expect(term.provenance.import.kept_from_earlier_attempts.bytes).toBeGreaterThan(0);

    const killProbe = s3Probe(client, bucket, PREFIX, target('DS-KILL'));
    const kill = await killDuringImport(rig, {
      datasetId: 'DS-KILL',
      totalBytes: TOTAL,
      worker: term.next,
      probe: killProbe,
      when: (record) => Promise.resolve(record.progress.bytes_done >= TOTAL / 2),
      next: () => rig.startWorker({ LOG_LEVEL: 'info' }),
      provenance,
      timeoutMs: 120_000,
    });
    process.stdout.write(
      `drain (S3): SIGKILL at ${kill.atPercent} %: ${mib(kill.copiedAgain)} sent again, attempt ${kill.attempts}\n`,
    );
    // The six files upload side by side: what the dead worker sent is kept as parts.
    expect(kill.provenance.import.kept_from_earlier_attempts.bytes).toBeGreaterThan(0);

    for (const id of ['DS-TERM', 'DS-KILL']) {
      const keys = await listKeys(client, bucket, `${PREFIX}${target(id)}/`);
      expect(keys.filter((key) => key.endsWith('.bin'))).toHaveLength(FILES);
      expect((await provenance(id)).totals).toEqual({ files: FILES + 1, bytes: TOTAL });
    }
    expect(await openUploads(client, bucket)).toEqual([]);
    await until(
      async () => (await killProbe.areas()).length === 0,
      'staging to be empty',
      30_000,
      200,
    );
  });
});
