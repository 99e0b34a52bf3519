import { readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { digest, tempDir, writeDatasetDirectory } from '../../../test/support/dropzone-fixture';
import { inspectDelivery } from './dataset-directory';
import { DatasetInspector } from './dataset-inspector';

const FILES = { 'top.txt': 'top', 'sub/deep.txt': 'deep' };

/** Every entry's mtime a minute back: old enough for the cache to trust it. */
function backdate(path: string): void {
  const old = new Date(Date.now() - 60_000);
  if (statSync(path).isDirectory())
    for (const name of readdirSync(path)) backdate(join(path, name));
  utimesSync(path, old, old);
}

function deliveredDataset(settled = true): string {
  const dir = join(tempDir('inspector'), 'DS-1');
  writeDatasetDirectory(dir, { submission: 'SUB-1', files: FILES });
  if (settled) backdate(dir);
  return dir;
}

describe('DatasetInspector', () => {
  it('answers an unchanged dataset from its cache (a deep payload change alone is not seen)', () => {
    const dir = deliveredDataset();
    const inspector = new DatasetInspector();
    expect(inspector.inspect(dir)).toMatchObject({ ready: true, fileCount: 2, byteSize: 7 });
    rmSync(join(dir, 'payload/sub/deep.txt'));
    // The documented limit: nothing watched changed, so the listing keeps its answer...
    expect(inspector.inspect(dir)).toMatchObject({ ready: true });
    // ...while a fresh reading (what imports use) sees the truth and updates the cache.
    expect(inspector.refresh(dir)).toMatchObject({ ready: false, reason: 'files_missing' });
    expect(inspector.inspect(dir)).toMatchObject({ ready: false, reason: 'files_missing' });
  });

  it('notices the marker removed or written', () => {
    const dir = deliveredDataset();
    const inspector = new DatasetInspector();
    expect(inspector.inspect(dir).ready).toBe(true);
    rmSync(join(dir, '.ready'));
    expect(inspector.inspect(dir)).toMatchObject({ ready: false, reason: 'marker_missing' });
    writeFileSync(join(dir, '.ready'), '');
    expect(inspector.inspect(dir).ready).toBe(true);
  });

  it('notices a manifest rewritten in place and a top-level payload file removed', () => {
    const dir = deliveredDataset();
    const inspector = new DatasetInspector();
    expect(inspector.inspect(dir).ready).toBe(true);
    writeFileSync(join(dir, 'manifest-sha256.txt'), `${digest('sha256', 'x')}  gone.txt\n`);
    expect(inspector.inspect(dir)).toMatchObject({ ready: false, reason: 'files_missing' });
    writeFileSync(join(dir, 'manifest-sha256.txt'), `${digest('sha256', 'top')}  top.txt\n`);
    expect(inspector.inspect(dir)).toMatchObject({ ready: true, fileCount: 1 });
    rmSync(join(dir, 'payload/top.txt'));
    expect(inspector.inspect(dir)).toMatchObject({ ready: false, reason: 'files_missing' });
  });

  it('does not cache a dataset changed within the last two seconds (coarse timestamps)', () => {
    const dir = deliveredDataset(false);
    const inspector = new DatasetInspector();
    expect(inspector.inspect(dir).ready).toBe(true);
    expect(inspector.size).toBe(0);
    rmSync(join(dir, 'payload/sub/deep.txt'));
    expect(inspector.inspect(dir)).toMatchObject({ ready: false, reason: 'files_missing' });
  });

  it('reports a dataset not delivered, and sees it once delivered', () => {
    const base = tempDir('inspector');
    const inspector = new DatasetInspector();
    expect(inspector.inspect(join(base, 'DS-2'))).toMatchObject({ reason: 'not_delivered' });
    writeDatasetDirectory(join(base, 'DS-2'), { submission: 'SUB-1', files: FILES });
    expect(inspector.inspect(join(base, 'DS-2')).ready).toBe(true);
  });

  it('keeps at most maxEntries datasets, dropping the oldest', async () => {
    const inspector = new DatasetInspector(2);
    const dirs = [deliveredDataset(), deliveredDataset(), deliveredDataset()];
    expect((await inspector.inspectMany(dirs)).map((i) => i.ready)).toEqual([true, true, true]);
    expect(inspector.size).toBe(2);
  });
});

describe('inspectDelivery (what the import asks before its own preflight)', () => {
  it('reports delivery only: directory and marker, never the manifests or payload', () => {
    const dir = deliveredDataset(false);
    rmSync(join(dir, 'payload/sub/deep.txt'));
    expect(inspectDelivery(dir)).toEqual({
      ready: true,
      reason: null,
      reasonDetail: null,
      fileCount: null,
      byteSize: null,
    });
    expect(new DatasetInspector().refresh(dir)).toMatchObject({ reason: 'files_missing' });
    rmSync(join(dir, '.ready'));
    expect(inspectDelivery(dir)).toMatchObject({ ready: false, reason: 'marker_missing' });
    rmSync(dir, { recursive: true });
    expect(inspectDelivery(dir)).toMatchObject({ ready: false, reason: 'not_delivered' });
  });
});
