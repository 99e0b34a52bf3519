import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { queueEnv } from '../../../test/support/provisioner-app';
import {
  createTestBucket,
  listKeys,
  removeTestBucket,
  s3StorageEnv,
  s3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';
import { poll, until } from '../../../test/support/wait';
import {
  finalPath,
  PROJECT,
  type ProvisionerRig,
  startRig,
  SUBMISSION,
} from '../../../test/robustness/support/provisioner-rig';
import { DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { running } from './support/process-state';

/** Two workers boot (TypeScript on a loaded machine), one after the other's lock lapsed. */
const SCENARIO_MS = 240_000;
jest.setTimeout(SCENARIO_MS);

/**
 * A worker killed (SIGKILL) while a validator runs: the validator dies with it (setpriv
 * --pdeathsig), and the import resumed by the next worker runs the validator again before it
 * publishes, never skipping it (issue 60, item 3). A worker stopped (SIGTERM) while one runs on S3
 * storage: the validator's group is killed, the copy it read is removed, the import is handed
 * over and the next worker validates again.
 */
/** A validator whose first run never ends (its pid in seen/pid); the next ones pass. */
function slowOnceValidator(base: string, seen: string): string {
  const validator = join(base, 'validator.sh');
  writeFileSync(
    validator,
    `#!/bin/sh
echo run >> "${seen}/runs"
if [ ! -e "${seen}/first" ]; then
  touch "${seen}/first"; echo $$ > "${seen}/pid"; exec sleep 600
fi
printf '{"result":"passed","files":[],"messages":[]}' > "$2/result.json"
`,
  );
  chmodSync(validator, 0o755);
  return validator;
}

/** The pid the validator's first run wrote, once it is there. */
const validatorPid = (seen: string): Promise<number> =>
  poll(
    () =>
      existsSync(join(seen, 'pid')) ? Number(readFileSync(join(seen, 'pid'), 'utf8')) : undefined,
    'the validator to start',
    60_000,
    50,
  );

describe('validation after a killed or stopped worker', () => {
  const base = tempDir('validators-resume');
  const storage = join(base, 'storage');
  const seen = join(base, 'seen');
  let rig: ProvisionerRig | undefined;

  afterAll(async () => {
    await rig?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('runs the validator again in the resumed import, and publishes only after it passed', async () => {
    mkdirSync(seen, { recursive: true });
    const dropzone = join(base, 'dropzone');
    new DropzoneFixture(dropzone)
      .submission(SUBMISSION, { project: PROJECT, datasets: ['DS-KILL'] })
      .dataset('DS-KILL', { submission: SUBMISSION, files: { 'a.txt': 'alpha\n' } });
    // Its first run never ends (the worker is killed meanwhile); the next one passes.
    const validator = slowOnceValidator(base, seen);
    rig = await startRig({
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([
        {
          name: 'dropzone',
          type: 'dropzone',
          root: dropzone,
          validators: [{ name: 'slow', command: [validator, '{input}', '{output}'] }],
        },
      ]),
      STORAGE_ROOT: storage,
      // A dead worker's job is taken up 5 s after its last renewal.
      IMPORT_LOCK_MS: '5000',
    });
    const first = await rig.startWorker();
    const { status, record } = await rig.importDataset('DS-KILL');
    expect(status).toBe(202);

    const pid = await validatorPid(seen);
    first.child.kill('SIGKILL');
    await first.exited;
    // Not published, and the validator went with its worker.
    expect(existsSync(finalPath(storage, 'DS-KILL'))).toBe(false);
    await until(() => !running(pid), `the validator (${pid}) to die with its worker`, 5000);

    await rig.startWorker();
    const [ended] = await rig.waitAllEnded([record.id], 60_000);
    expect(ended?.state).toBe('imported');
    expect(readFileSync(join(seen, 'runs'), 'utf8')).toBe('run\nrun\n');
    const provenance = JSON.parse(
      readFileSync(join(finalPath(storage, 'DS-KILL'), '.provisioner/provenance.json'), 'utf8'),
    );
    expect(provenance.import.attempt).toBeGreaterThanOrEqual(2);
  });

  it('SIGTERM while a validator runs on S3 storage: its group killed, its copy removed, the import handed over and validated again', async () => {
    const base2 = join(base, 'sigterm');
    const seen2 = join(base2, 'seen');
    const work = join(base2, 'work');
    mkdirSync(seen2, { recursive: true });
    mkdirSync(work, { recursive: true });
    const server = await s3TestServer();
    const client = testS3Client(server);
    const bucket = await createTestBucket(client, 'validators-term');
    let termRig: ProvisionerRig | undefined;
    try {
      const dropzone = join(base2, 'dropzone');
      new DropzoneFixture(dropzone)
        .submission(SUBMISSION, { project: PROJECT, datasets: ['DS-TERM'] })
        .dataset('DS-TERM', { submission: SUBMISSION, files: { 'a.txt': 'alpha\n' } });
      const validator = slowOnceValidator(base2, seen2);
      termRig = await startRig({
        ...(await queueEnv('redis')),
        ...s3StorageEnv(server, bucket, 'term/'),
        SOURCES: JSON.stringify([
          {
            name: 'dropzone',
            type: 'dropzone',
            root: dropzone,
            validators: [{ name: 'slow', command: [validator, '{input}', '{output}'] }],
          },
        ]),
        VALIDATOR_WORK_DIR: work,
      });
      const first = await termRig.startWorker();
      const { status, record } = await termRig.importDataset('DS-TERM');
      expect(status).toBe(202);
      const pid = await validatorPid(seen2);
      // The copy the validator reads is in the work directory while it runs.
      expect(readdirSync(work)).toHaveLength(1);
      first.child.kill('SIGTERM');
      await first.exited;
      expect(running(pid)).toBe(false);
      expect(readdirSync(work)).toEqual([]);
      // Not published: on S3 the staged files lie at their keys, the dataset exists once its
      // provenance is written, after the validators.
      const keys = await listKeys(client, bucket, `term/projects/${PROJECT}/${SUBMISSION}/`);
      expect(keys.filter((key) => key.endsWith('/.provisioner/provenance.json'))).toEqual([]);
      // Handed over, not refused: the next worker takes it at once and validates again.
      expect((await termRig.record(record.id))?.state).not.toMatch(/rejected|failed/);
      await termRig.startWorker();
      const [ended] = await termRig.waitAllEnded([record.id], 60_000);
      expect(ended?.state).toBe('imported');
      expect(readFileSync(join(seen2, 'runs'), 'utf8')).toBe('run\nrun\n');
      expect(readdirSync(work)).toEqual([]);
    } finally {
      await termRig?.close();
      await removeTestBucket(client, bucket);
      client.destroy();
    }
  });
});
