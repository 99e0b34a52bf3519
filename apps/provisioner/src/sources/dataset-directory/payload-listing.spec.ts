import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/dropzone-fixture';
import {
  existsByLstat,
  PAYLOAD_TREE_PATHS,
  writePayloadTree,
} from '../../../test/support/payload-tree';
import { PayloadListing } from './payload-listing';

describe('PayloadListing', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir('listing');
    writePayloadTree(root);
  });

  const paths = PAYLOAD_TREE_PATHS;
  const byLstat = (path: string) => existsByLstat(root, path);

  it('answers as a lookup path by path would', () => {
    const listing = new PayloadListing(root);
    expect(paths.map((p) => [p, listing.has(p)])).toEqual(paths.map((p) => [p, byLstat(p)]));
    expect(listing.has('via-link/b/deep.txt')).toBe(false);
    expect(listing.has('a/b/deep.txt')).toBe(true);
  });

  it('gives the same answers past its memory limits (large directories, names held)', () => {
    const tight = new PayloadListing(root, { maxListedEntries: 5, maxHeldNames: 8 });
    for (let round = 0; round < 2; round++)
      expect(paths.map((p) => [p, tight.has(p)])).toEqual(paths.map((p) => [p, byLstat(p)]));
  });

  it('reads each directory at most once, however the manifest interleaves them', () => {
    // Six directories of five files, asked for round-robin (as a manifest written in creation
    // order across samples lists them), with room for the names of two directories only.
    const dirs = ['s0', 's1', 's2', 's3', 's4', 's5'];
    for (const d of dirs) {
      mkdirSync(join(root, d));
      for (let i = 0; i < 5; i++) writeFileSync(join(root, d, `f${i}`), 'x');
    }
    const asked: string[] = [];
    for (let i = 0; i < 5; i++) for (const d of dirs) asked.push(`${d}/f${i}`, `${d}/absent${i}`);
    // The module object itself (an `import * as` namespace cannot be spied on).
    const fs = jest.requireActual<typeof import('node:fs')>('node:fs');
    const reads = jest.spyOn(fs, 'opendirSync');
    try {
      const tight = new PayloadListing(root, { maxListedEntries: 100, maxHeldNames: 12 });
      expect(asked.map((p) => [p, tight.has(p)])).toEqual(asked.map((p) => [p, byLstat(p)]));
      // The root and the directories listed before the budget ran out, each once.
      const listed = reads.mock.calls.map(([path]) => String(path));
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed.length).toBeLessThanOrEqual(1 + dirs.length);
    } finally {
      reads.mockRestore();
    }
  });

  it('sees a directory that is gone, or replaced by a link, as holding nothing', () => {
    const listing = new PayloadListing(join(root, 'a'));
    renameSync(join(root, 'a'), join(root, 'a.old'));
    expect(listing.has('f-1.txt')).toBe(false);
    symlinkSync(join(root, 'a.old'), join(root, 'a'));
    expect(new PayloadListing(root).has('a/f-1.txt')).toBe(false);
  });
});
