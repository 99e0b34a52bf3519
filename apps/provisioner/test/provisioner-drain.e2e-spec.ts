import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { queueEnv } from '../../../test/support/provisioner-app';
import { until } from '../../../test/support/wait';
import {
  drainDuringImport,
  filesystemProbe,
  killDuringImport,
  mib,
  settled,
  writeDrainDataset,
} from '../../../test/robustness/support/drain-scenario';
import {
  finalPath,
  ProvisionerRig,
  startRig,
} from '../../../test/robustness/support/provisioner-rig';
import { tempDir } from './support/dropzone-fixture';

const MiB = 1024 * 1024;
/** 64 files of 16 MiB: each is copied on its own, and a stop lands between and inside them. */
const FILES = 64;
const FILE = 16 * MiB;
const TOTAL = FILES * FILE + 'DS-TERM\n'.length;
/** Copy threads of each worker: at most this many files are in flight when a copy stops. */
const THREADS = 2;
/** Three workers boot (TypeScript on a loaded machine), and 2 GiB are copied. */
const SCENARIO_MS = 240_000;
jest.setTimeout(SCENARIO_MS);

/**
 * Node drains and crashes in the middle of imports, with real worker processes: a SIGTERM hands
 * the import over (the worker exits 0, the job is queued again while its lock would still hold
 * for ten minutes) and the next worker keeps every file the stopped one had copied; a SIGKILL
 * loses only what was not yet recorded. Each import is published once, and nothing partial is
 * ever at its final path; the next worker's start-up reconciliation removes staging of imports
 * that will not run again and leaves a published dataset without provenance alone.
 * test/robustness/drain.robust-spec.ts runs the same on S3.
 */
describe('imports survive drains (SIGTERM) and crashes (SIGKILL) of their worker', () => {
  let rig: ProvisionerRig;
  const base = tempDir('drain');
  const storage = join(base, 'storage');
  const dropzone = join(base, 'dropzone');

  afterAll(async () => {
    await rig?.close();
    // Published trees are read-only; as their owner we may still remove them.
    rmSync(base, { recursive: true, force: true });
  });

  const provenance = (id: string) =>
    Promise.resolve(
      JSON.parse(
        readFileSync(join(finalPath(storage, id), '.provisioner/provenance.json'), 'utf8'),
      ),
    );

  /** A dataset is absent from its final path or complete there, whenever it is looked at. */
  const violations: string[] = [];
  const watcher = setInterval(() => {
    for (const id of ['DS-TERM', 'DS-KILL']) {
      const path = finalPath(storage, id);
      if (!existsSync(path)) continue;
      try {
        const parts = readdirSync(path).filter((name) => name.endsWith('.bin'));
        const short = parts.filter((name) => statSync(join(path, name)).size !== FILE);
        if (
          !existsSync(join(path, '.provisioner/provenance.json')) ||
          parts.length !== FILES ||
          short.length
        )
          violations.push(`${id}: ${parts.length} parts, ${short.length} short, at the final path`);
      } catch (error) {
        violations.push(`${id}: ${(error as Error).message}`);
      }
    }
  }, 10);
  afterAll(() => clearInterval(watcher));

  it('resumes on another worker keeping what was staged, and publishes each import once', async () => {
    const written = [
      writeDrainDataset(dropzone, 'DS-TERM', FILES, FILE, []),
      writeDrainDataset(dropzone, 'DS-KILL', FILES, FILE, ['DS-TERM']),
    ];
    rig = await startRig({
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone }]),
      STORAGE_ROOT: storage,
      IMPORT_COPY_THREADS: String(THREADS),
      // A dead worker's job is taken up 5 s after its last renewal. One length for every worker:
      // the stalled-job check of one is paced by the lock length of the worker that ran it last.
      IMPORT_LOCK_MS: '5000',
    });
    const probe = filesystemProbe(storage);
    const first = await rig.startWorker({ LOG_LEVEL: 'info' });
    await settled(Math.max(...written));

    const term = await drainDuringImport(rig, {
      datasetId: 'DS-TERM',
      totalBytes: TOTAL,
      worker: first,
      probe,
      when: async () => (await probe.bytes()) >= TOTAL / 4,
      next: () => rig.startWorker({ LOG_LEVEL: 'info' }),
      provenance,
      timeoutMs: SCENARIO_MS / 4,
    });
    process.stdout.write(
      `drain: SIGTERM at ${term.atPercent} %: exit ${term.exitCode} after ${term.drainMs} ms, ` +
        `${mib(term.copiedAgain)} copied again, attempt ${term.attempts}\n`,
    );
    expect(term.exitCode).toBe(0);
    // Queued again the moment the worker is gone: no other worker ran, its lock had not lapsed.
    expect(term.stateAfterExit).toBe('queued');
    // Only the files in flight on the copy threads are copied again.
    expect(term.copiedAgain).toBeLessThanOrEqual(THREADS * FILE);
    expect(term.provenance.import.kept_from_earlier_attempts.files).toBeGreaterThan(0);
    expect(term.provenance.import.attempt).toBe(2);

    const recordedAtLeast = FILES / 4;
    const kill = await killDuringImport(rig, {
      datasetId: 'DS-KILL',
      totalBytes: TOTAL,
      worker: term.next,
      probe,
      when: async () => (await probe.recorded()) >= recordedAtLeast,
      next: async () => {
        // Leftovers for the next worker's start-up reconciliation: staging of an import that
        // will not run again (removed) and a published dataset without provenance (reported,
        // kept).
        mkdirSync(join(storage, '.staging/dropzone-dataset-GHOST/sub'), { recursive: true });
        writeFileSync(join(storage, '.staging/dropzone-dataset-GHOST/sub/part'), 'half');
        mkdirSync(join(storage, 'projects/PRJ1/SUB-OLD/data/raw/DS-OLD'), { recursive: true });
        writeFileSync(join(storage, 'projects/PRJ1/SUB-OLD/data/raw/DS-OLD/data.bin'), 'keep me');
        return rig.startWorker({ LOG_LEVEL: 'info' });
      },
      provenance,
      timeoutMs: SCENARIO_MS / 4,
    });
    process.stdout.write(
      `drain: SIGKILL at ${kill.atPercent} %: ${mib(kill.copiedAgain)} copied again, attempt ${kill.attempts}\n`,
    );
    // Every file the journal named when the worker died is kept.
    expect(kill.provenance.import.kept_from_earlier_attempts.files).toBeGreaterThanOrEqual(
      recordedAtLeast,
    );

    for (const id of ['DS-TERM', 'DS-KILL']) {
      const parts = readdirSync(finalPath(storage, id)).filter((name) => name.endsWith('.bin'));
      expect(parts).toHaveLength(FILES);
      for (const part of parts)
        expect(statSync(join(finalPath(storage, id), part)).size).toBe(FILE);
    }
    expect(readdirSync(join(finalPath(storage, 'DS-TERM'), '..')).sort()).toEqual([
      'DS-KILL',
      'DS-TERM',
    ]);
    // Reconciliation runs beside the jobs: the ghost's staging goes once it gets there.
    await until(async () => (await probe.areas()).length === 0, 'staging to be empty', 30_000, 100);
    expect(
      readFileSync(join(storage, 'projects/PRJ1/SUB-OLD/data/raw/DS-OLD/data.bin'), 'utf8'),
    ).toBe('keep me');
    expect(violations).toEqual([]);
  });
});
