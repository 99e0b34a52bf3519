import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { queueEnv } from '../support/provisioner-app';
import { eventually } from './support/load-loop';
import { finalPath, partialProblem, ProvisionerRig, startRig, writeDatasets } from './support/provisioner-rig';

const MiB = 1024 * 1024;
const BIG = 300 * MiB;
const DISK = 560 * MiB;

/** sha256 over every file under a directory (paths and contents): equal = untouched. */
function treeDigest(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      hash.update(path);
      if (entry.isDirectory()) walk(path);
      else hash.update(readFileSync(path)).update(String(statSync(path).mode));
    }
  };
  walk(root);
  return hash.digest('hex');
}

/**
 * Storage on a small filesystem of its own (a tmpfs mounted for the test: never the machine's
 * disk): a published dataset is already there, then two imports of 300 MiB start together. Each
 * passes the free-space check alone (560 MiB free), but both together do not fit, so the disk
 * fills up during the copies. The import that hits ENOSPC must fail cleanly and be retried;
 * once the filesystem is grown, it completes. Published data is never touched.
 */
describe('imports when the storage disk fills up during a copy', () => {
  let rig: ProvisionerRig;
  const base = tempDir('robust-disk');
  const disk = join(base, 'disk');
  const storage = join(disk, 'storage');
  let mounted = false;

  beforeAll(() => {
    mkdirSync(disk, { recursive: true });
    // Needs CAP_SYS_ADMIN (root here and in CI); a failure says so plainly.
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK}`, 'tmpfs', disk]);
    mounted = true;
    mkdirSync(storage);
  });

  afterAll(async () => {
    await rig?.close();
    if (mounted) execFileSync('umount', ['-l', disk]);
    rmSync(base, { recursive: true, force: true });
  });

  it('fails the copy cleanly, retries it later, and leaves published data untouched', async () => {
    const ids = writeDatasets(join(base, 'dropzone'), 3, BIG);
    const [first, second, published] = ids;
    rig = await startRig({
      ...(await queueEnv('redis')),
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: join(base, 'dropzone') }]),
      STORAGE_ROOT: storage,
      IMPORT_MAX_ATTEMPTS: '8',
      IMPORT_CONCURRENCY: '2',
      IMPORT_LOCK_MS: '5000',
      // Copies on the main thread's lanes: a first attempt on the copy threads stages while its
      // checks run (docs/decisions/stage-while-checking.md), so the first import could copy
      // before the second's free-space check, which would then refuse it (insufficient_space)
      // instead of letting it meet a full disk. On lanes both checks precede any copy. ENOSPC on
      // the copy threads is copy-thread-pool.spec.ts's.
      IMPORT_COPY_THREADS: '0',
    });
    const firstWorker = await rig.startWorker();

    // A dataset published before the trouble starts: it must come out bit for bit the same.
    execFileSync('mount', ['-o', `remount,size=${DISK + BIG + 80 * MiB}`, disk]);
    const pre = await rig.importDataset(published);
    const [done] = await rig.waitAllEnded([pre.record.id], 60_000);
    expect(done.state).toBe('imported');
    execFileSync('mount', ['-o', `remount,size=${DISK + BIG + 8 * MiB}`, disk]);
    const publishedDigest = treeDigest(finalPath(storage, published));

    // Both imports are queued before a worker runs, so it takes them together and both check
    // the free space before either copies: with a worker already running, the first could copy
    // all its bytes before the second was even queued, and the second would then be refused by
    // the check (insufficient_space) instead of meeting a full disk mid-copy.
    firstWorker.child.kill('SIGTERM');
    await firstWorker.exited;
    const imports = await Promise.all([first, second].map((id) => rig.importDataset(id)));
    const importIds = imports.map((i) => i.record.id);
    await rig.startWorker();
    const errors = new Set<string>();
    const sawFailure = await eventually(async () => {
      const records = await Promise.all(importIds.map((id) => rig.record(id)));
      for (const r of records) if (r?.error) errors.add(`${r.key}: ${r.error.code}: ${r.error.message}`);
      return [...errors].some((e) => /ENOSPC|no space/i.test(e));
    }, 60_000);
    expect([...errors]).toEqual(expect.arrayContaining([expect.stringMatching(/ENOSPC|no space/i)]));
    expect(sawFailure).toBe(true);
    // Nothing partial at a final path, and the published dataset is untouched.
    for (const id of [first, second]) expect(partialProblem(storage, id, BIG)).toBeUndefined();
    expect(treeDigest(finalPath(storage, published))).toBe(publishedDigest);

    // The operator adds space: the retry goes through.
    execFileSync('mount', ['-o', `remount,size=${4 * DISK}`, disk]);
    const records = await rig.waitAllEnded(importIds, 150_000);
    process.stdout.write(
      `disk full: errors seen ${JSON.stringify([...errors])}; attempts ${records.map((r) => r.attempts).join(', ')}\n`,
    );
    expect(records.map((r) => [r.key, r.state])).toEqual([[first, 'imported'], [second, 'imported']]);
    expect(records.some((r) => r.attempts > 1)).toBe(true);
    for (const id of ids) expect(partialProblem(storage, id, BIG)).toBeUndefined();
    expect(treeDigest(finalPath(storage, published))).toBe(publishedDigest);
    expect(readdirSync(join(storage, '.staging'))).toEqual([]);
  });
});
