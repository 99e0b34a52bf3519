import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { digest, tempDir, writeDatasetDirectory } from '../../../test/support/dropzone-fixture';
import {
  existsByLstat,
  PAYLOAD_TREE_PATHS,
  writePayloadTree,
} from '../../../test/support/payload-tree';
import { DEFAULT_SOURCE_LIMITS } from '../../config/source-config';
import { readDatasetDirectory } from './dataset-directory';
import { PathHashSet } from './path-hash-set';
import { markPresentEntries, walkBudget } from './payload-presence';
import { REAL_IO_MS } from '../../../../../test/support/timeouts';

// One test writes 65,000 files: seconds on a loaded 2-core machine.
jest.setTimeout(REAL_IO_MS);

describe('markPresentEntries', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir('presence');
    writePayloadTree(root);
  });

  const paths = PAYLOAD_TREE_PATHS;
  const setOf = (list: string[]) => {
    const set = new PathHashSet();
    for (const p of list) set.add(p);
    return set;
  };

  it('marks exactly the paths a lookup path by path finds, reading the whole tree once', () => {
    const set = setOf(paths);
    expect(markPresentEntries(root, set, 1_000)).toBe(true);
    expect(paths.map((p) => [p, set.isPresent(p)])).toEqual(
      paths.map((p) => [p, existsByLstat(root, p)]),
    );
    expect(set.isPresent('via-link/b/deep.txt')).toBe(false);
    expect(set.allPresent).toBe(false);
    const found = setOf(paths.filter((p) => existsByLstat(root, p)));
    expect(markPresentEntries(root, found, 1_000)).toBe(true);
    expect(found.allPresent).toBe(true);
  });

  it('stops past its budget of entries, having marked only what it found', () => {
    const set = setOf(paths);
    expect(markPresentEntries(root, set, 5)).toBe(false);
    const marked = paths.filter((p) => set.isPresent(p));
    expect(marked.length).toBeLessThanOrEqual(5);
    expect(marked.every((p) => existsByLstat(root, p))).toBe(true);
  });

  it('reports a payload it cannot read as not walked', () => {
    const set = setOf(paths);
    rmSync(root, { recursive: true });
    expect(markPresentEntries(root, set, 1_000)).toBe(false);
    expect(paths.some((p) => set.isPresent(p))).toBe(false);
  });
});

describe("an import request's presence check (readDatasetDirectory, payload 'presence')", () => {
  const read = (dir: string, payload: 'presence' | 'sizes') =>
    readDatasetDirectory(dir, { document: 'none', payload, limits: DEFAULT_SOURCE_LIMITS })
      .inspection;
  const files = Object.fromEntries(
    Array.from({ length: 30 }, (_, i) => [`s${i % 3}/run/f-${i}.dat`, `${i}`]),
  );

  it('finds a complete payload ready, counting its files', () => {
    const dir = join(tempDir('presence-ready'), 'DS');
    writeDatasetDirectory(dir, { submission: 'SUB-1', files, manifests: ['sha256', 'md5'] });
    expect(read(dir, 'presence')).toMatchObject({ ready: true, fileCount: 30, byteSize: null });
  });

  it('names the same missing paths, in manifest order, as the listing does', () => {
    const dir = join(tempDir('presence-missing'), 'DS');
    writeDatasetDirectory(dir, { submission: 'SUB-1', files });
    for (const gone of ['s1/run/f-4.dat', 's0/run/f-9.dat', 's2/run/f-20.dat', 's2/run/f-29.dat'])
      rmSync(join(dir, 'payload', gone));
    const presence = read(dir, 'presence');
    expect(presence).toMatchObject({ ready: false, reason: 'files_missing', fileCount: 30 });
    expect(presence.reasonDetail).toBe(
      '4 manifest path(s) do not exist, e.g. s1/run/f-4.dat, s0/run/f-9.dat, s2/run/f-20.dat',
    );
    expect(read(dir, 'sizes').reasonDetail).toBe(presence.reasonDetail);
  });

  it('looks the paths up one by one when the payload holds more entries than its walk reads', () => {
    // A depositor's payload of many unlisted files: the walk stops at its budget, and the
    // paths it did not reach are still found (or not) as a lookup path by path would.
    const dir = join(tempDir('presence-crowded'), 'DS');
    // m/ is read whole before m/sub/ is entered, so the walk never reaches the listed file.
    const listed = { 'm/sub/listed.dat': 'x', 'z/gone.dat': 'g' };
    writeDatasetDirectory(dir, { submission: 'SUB-1', files: listed });
    rmSync(join(dir, 'payload/z/gone.dat'));
    const budget = walkBudget(new PathHashSet()) + 10;
    for (let i = 0; i < budget; i++) writeFileSync(join(dir, 'payload/m', `u-${i}`), '');
    const presence = read(dir, 'presence');
    expect(presence).toMatchObject({ ready: false, reason: 'files_missing', fileCount: 2 });
    expect(presence.reasonDetail).toBe('1 manifest path(s) do not exist, e.g. z/gone.dat');
    writeFileSync(join(dir, 'payload/z/gone.dat'), 'g');
    expect(read(dir, 'presence')).toMatchObject({ ready: true, fileCount: 2 });
  });

  it('does not walk a payload whose manifest is invalid', () => {
    const dir = join(tempDir('presence-invalid'), 'DS');
    writeDatasetDirectory(dir, { submission: 'SUB-1', files });
    appendFileSync(join(dir, 'manifest-sha256.txt'), `${digest('sha256', 'x')}  s0/run/f-0.dat\n`);
    expect(read(dir, 'presence')).toMatchObject({ ready: false, reason: 'manifest_invalid' });
  });
});
