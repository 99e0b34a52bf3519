import {
  _Object,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  closeSync,
  existsSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  DropzoneFixture,
  zeroSha256,
} from '../../../apps/provisioner/test/support/dropzone-fixture';
import { poll, until } from '../../support/wait';
import type { ImportRecord } from '../../../apps/provisioner/src/imports/import-record';
import type { ProvisionerRig, WorkerProcess } from './provisioner-rig';
import { PROJECT, SUBMISSION } from './provisioner-rig';

/**
 * What a staging area holds for one dataset, however the storage keeps it: what the tests of
 * drains measure (filesystem: the area's files; S3: the objects under the dataset's keys and the
 * parts of open uploads).
 */
export interface StagingProbe {
  /** Bytes staged for the dataset: whole and partial files, parts of open uploads. */
  bytes(): Promise<number>;
  /** Entries the staging journals of the dataset's areas hold. */
  recorded(): Promise<number>;
  /** Staging areas left, of any import. */
  areas(): Promise<string[]>;
}

/** What a stopped attempt left, and what the next one did with it. */
export interface ResumeFigures {
  /** Of the dataset's bytes, how much the stopped attempt had staged when it stopped (%). */
  atPercent: number;
  /** Bytes in staging once the worker was gone (partial files and parts included). */
  stagedBytes: number;
  /** Bytes the next attempt kept (provenance `kept_from_earlier_attempts.bytes`). */
  keptBytes: number;
  /** Staged before and written again: stagedBytes - keptBytes. */
  copiedAgain: number;
  /** The next attempt's record: `attempts` and the provenance it published. */
  attempts: number;
  provenance: {
    import: { attempt: number; kept_from_earlier_attempts: { files: number; bytes: number } };
  };
}

export interface DrainFigures extends ResumeFigures {
  /** SIGTERM to exit. */
  drainMs: number;
  exitCode: number | null;
  /** The import's state right after the worker exited (its lock still held: handed over or not). */
  stateAfterExit: string | undefined;
}

/**
 * A ready dataset of `files` sparse files of `fileBytes` (cheap to create, real bytes to copy)
 * and one small file, added to the rig's submission (which then lists `submissionDatasets` and
 * it). Returns when its marker was written: see settled().
 */
export function writeDrainDataset(
  dropzoneRoot: string,
  id: string,
  files: number,
  fileBytes: number,
  submissionDatasets: string[],
): number {
  const fixture = new DropzoneFixture(dropzoneRoot).submission(SUBMISSION, {
    project: PROJECT,
    datasets: [...submissionDatasets, id],
  });
  fixture.dataset(id, { submission: SUBMISSION, files: { 'README.txt': `${id}\n` }, ready: false });
  const dir = fixture.datasetDir(id);
  const sha = zeroSha256(fileBytes);
  let manifest = readFileSync(join(dir, 'manifest-sha256.txt'), 'utf8');
  for (let i = 0; i < files; i++) {
    const name = `part-${String(i).padStart(3, '0')}.bin`;
    const fd = openSync(join(dir, 'payload', name), 'w');
    ftruncateSync(fd, fileBytes);
    closeSync(fd);
    manifest += `${sha}  ${name}\n`;
  }
  writeFileSync(join(dir, 'manifest-sha256.txt'), manifest);
  writeFileSync(join(dir, '.ready'), '');
  return statSync(join(dir, '.ready')).ctimeMs;
}

/**
 * Waits until files written at `writtenAtMs` are older than the 2 s under which a copy is not
 * recorded for reuse (preflight.ts, RECENT_CHANGE_MS: coarse file-system clocks).
 */
export async function settled(writtenAtMs: number): Promise<void> {
  await until(() => Date.now() - writtenAtMs > 2100, 'the dataset files to be 2 s old', 5000, 50);
}

/** Every file below `dir` with its size (relative paths); empty when it does not exist. */
function filesBelow(dir: string): { path: string; size: number }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, size: statSync(path).size };
    });
}

const JOURNAL = 'staged-files.jsonl';
const lines = (text: string): number => text.split('\n').filter(Boolean).length;

/** A filesystem storage's staging (STORAGE_ROOT/.staging). */
export function filesystemProbe(storageRoot: string): StagingProbe {
  const staging = join(storageRoot, '.staging');
  return {
    bytes: () =>
      Promise.resolve(
        filesBelow(staging)
          .filter((file) => !file.path.endsWith(JOURNAL))
          .reduce((sum, file) => sum + file.size, 0),
      ),
    recorded: () =>
      Promise.resolve(
        filesBelow(staging)
          .filter((file) => file.path.endsWith(JOURNAL))
          .reduce((sum, file) => sum + lines(readFileSync(file.path, 'utf8')), 0),
      ),
    areas: () => Promise.resolve(existsSync(staging) ? readdirSync(staging) : []),
  };
}

/** An S3 storage's staging of one dataset: objects under its keys, open uploads, journals. */
export function s3Probe(
  client: S3Client,
  bucket: string,
  prefix: string,
  target: string,
): StagingProbe {
  const under = `${prefix}${target}/`;
  return {
    async bytes() {
      let total = 0;
      for (const object of await listObjects(client, bucket, under)) total += object.Size ?? 0;
      const uploads = await client.send(
        new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: under }),
      );
      for (const upload of uploads.Uploads ?? []) {
        const parts = await client.send(
          new ListPartsCommand({ Bucket: bucket, Key: upload.Key!, UploadId: upload.UploadId! }),
        );
        for (const part of parts.Parts ?? []) total += part.Size ?? 0;
      }
      return total;
    },
    async recorded() {
      let total = 0;
      for (const object of await listObjects(client, bucket, `${prefix}.staging/`)) {
        if (!object.Key!.endsWith('.jsonl')) continue;
        const body = await client.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key! }));
        total += lines(await body.Body!.transformToString());
      }
      return total;
    },
    async areas() {
      return (await listObjects(client, bucket, `${prefix}.staging/`)).map((o) => o.Key!);
    },
  };
}

async function listObjects(client: S3Client, bucket: string, prefix: string): Promise<_Object[]> {
  const objects: _Object[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    objects.push(...(page.Contents ?? []));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return objects;
}

/** The published provenance of an import, read through the rig's storage reader. */
export type ProvenanceReader = (datasetId: string) => Promise<ResumeFigures['provenance']>;

/** What a stop in the middle of an import is given. */
export interface StopOptions {
  datasetId: string;
  totalBytes: number;
  /** The worker that takes the import (the only one running). */
  worker: WorkerProcess;
  probe: StagingProbe;
  /** Asked with the import's record every few ms: the signal goes once it holds. */
  when: (record: ImportRecord) => Promise<boolean>;
  /** Starts the worker that resumes the import. */
  next: () => Promise<WorkerProcess>;
  provenance: ProvenanceReader;
  timeoutMs: number;
}

/** Requests the import and waits until `when` holds while it is still copying; its id. */
async function importUntil(rig: ProvisionerRig, options: StopOptions): Promise<string> {
  const { record } = await rig.importDataset(options.datasetId);
  await poll(
    async () => {
      const current = await rig.record(record.id);
      if (current?.state === 'imported') throw new Error('the copy finished before the stop');
      return current && (await options.when(current)) ? true : undefined;
    },
    `import ${record.id} to be under way`,
    options.timeoutMs,
    5,
  );
  return record.id;
}

/**
 * SIGTERM in the middle of an import: the worker is stopped once `when` holds, then gets
 * SIGTERM, then runs on: it must exit 0, leaving the job queued the moment it is gone (before its
 * lock could lapse, and with no other worker to find it stalled). `next` resumes it to the end.
 */
export async function drainDuringImport(
  rig: ProvisionerRig,
  options: StopOptions,
): Promise<DrainFigures & { next: WorkerProcess }> {
  const { worker, probe } = options;
  const importId = await importUntil(rig, options);
  // Held still while the signal is sent, so the drain starts in the middle of the copy however
  // fast this machine copies.
  const pid = worker.child.pid!;
  process.kill(pid, 'SIGSTOP');
  const t0 = Date.now();
  process.kill(pid, 'SIGTERM');
  process.kill(pid, 'SIGCONT');
  const exit = (await worker.exited) as { code: number | null };
  const drainMs = Date.now() - t0;
  const stateAfterExit = (await rig.record(importId))?.state;
  const stagedBytes = await probe.bytes();
  const next = await options.next();
  const resumed = await finish(rig, importId, options, stagedBytes, [worker, next]);
  return { ...resumed, drainMs, exitCode: exit.code, stateAfterExit, next };
}

/**
 * SIGKILL in the middle of an import: the worker is killed once `when` holds; `next` resumes it
 * once the dead worker's lock lapses.
 */
export async function killDuringImport(
  rig: ProvisionerRig,
  options: StopOptions,
): Promise<ResumeFigures> {
  const { worker, probe } = options;
  const importId = await importUntil(rig, options);
  worker.child.kill('SIGKILL');
  await worker.exited;
  const stagedBytes = await probe.bytes();
  const next = await options.next();
  return finish(rig, importId, options, stagedBytes, [worker, next]);
}

async function finish(
  rig: ProvisionerRig,
  importId: string,
  options: StopOptions,
  stagedBytes: number,
  workers: WorkerProcess[],
): Promise<ResumeFigures> {
  const [done] = await rig.waitAllEnded([importId], options.timeoutMs);
  if (done?.state !== 'imported')
    throw new Error(
      `import ${importId} ended ${done?.state}: ${JSON.stringify(done?.error)}\n` +
        `staging: ${(await options.probe.areas()).join(', ')}\n` +
        workers.map((w, i) => `worker ${i + 1}:\n${w.output().slice(-3000)}`).join('\n'),
    );
  const provenance = await options.provenance(options.datasetId);
  const keptBytes = provenance.import.kept_from_earlier_attempts.bytes;
  return {
    atPercent: Math.round((100 * stagedBytes) / options.totalBytes),
    stagedBytes,
    keptBytes,
    copiedAgain: stagedBytes - keptBytes,
    attempts: done.attempts,
    provenance,
  };
}

/** MiB with one decimal, for the figures the specs print. */
export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
