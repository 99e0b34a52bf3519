import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImportRejectedError, ImportStoppedError } from '../import-errors';
import { ValidatorWorkArea } from './validator-work-area';

/** A pid that ran and ended: no process has it (until the kernel wraps around, not in this test). */
function deadPid(): number {
  return Number(spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim());
}

describe('ValidatorWorkArea (VALIDATOR_WORK_DIR, VALIDATOR_WORK_MAX_BYTES)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'work-area-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives a private directory, removed with read-only content on release', async () => {
    const area = new ValidatorWorkArea(dir, 1000);
    const work = await area.open(10);
    expect(readdirSync(dir)).toEqual([work.path.slice(dir.length + 1)]);
    mkdirSync(join(work.path, 'data/sub'), { recursive: true });
    writeFileSync(join(work.path, 'data/sub/a.txt'), 'a', { mode: 0o444 });
    chmodSync(join(work.path, 'data/sub'), 0o555);
    chmodSync(join(work.path, 'data'), 0o555);
    expect(area.reservedBytes).toBe(10);
    await work.release();
    expect(readdirSync(dir)).toEqual([]);
    expect(area.reservedBytes).toBe(0);
  });

  it('refuses a dataset larger than the bound; one that fits beside others waits for them', async () => {
    const area = new ValidatorWorkArea(dir, 100);
    await expect(area.open(101)).rejects.toEqual(
      new ImportRejectedError(
        'validation_too_large',
        "the dataset's 101 bytes are more than the validators' work directory takes (VALIDATOR_WORK_MAX_BYTES=100)",
      ),
    );
    const first = await area.open(60);
    let second: { release(): Promise<void> } | undefined;
    const waiting = area.open(60).then((w) => (second = w));
    // The first still holds its bytes: the second has not got its directory.
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBeUndefined();
    await first.release();
    await waiting;
    expect(area.reservedBytes).toBe(60);
    await second!.release();
  });

  it('a stop ends the wait for space (ImportStoppedError), holding nothing', async () => {
    const area = new ValidatorWorkArea(dir, 100);
    const first = await area.open(100);
    const stop = new AbortController();
    const waiting = area.open(1, stop.signal);
    stop.abort();
    await expect(waiting).rejects.toBeInstanceOf(ImportStoppedError);
    await first.release();
    expect(area.reservedBytes).toBe(0);
  });

  it("removes what a killed worker left before the first validation, never a live worker's", async () => {
    const dead = join(dir, `provisioner-validator-${deadPid()}-abc123`);
    const live = join(dir, `provisioner-validator-${process.ppid}-def456`);
    const other = join(dir, 'something-else');
    for (const path of [dead, live, other]) mkdirSync(join(path, 'data'), { recursive: true });
    chmodSync(join(dead, 'data'), 0o555);
    await new ValidatorWorkArea(dir, 100).sweepOnce();
    expect(readdirSync(dir).sort()).toEqual([live, other].map((p) => p.slice(dir.length + 1)));
  });
});
