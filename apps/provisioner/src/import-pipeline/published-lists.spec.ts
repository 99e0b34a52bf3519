import { createHash } from 'node:crypto';
import { byteChunks } from '../common/byte-chunks';
import { provenanceChunks, provenanceText, type Provenance } from '../storage/provenance';
import { PlannedFiles } from './planned-files';
import { provenanceFileEntries, storedManifestLines } from './published-lists';

const hash = (algorithm: string, i: number) =>
  createHash(algorithm).update(String(i)).digest('hex');

/** Paths with what JSON escapes, what it does not, several directory depths and none. */
const UNUSUAL = [
  'top',
  'a "quoted" name',
  'back\\slash/inside',
  'tab\there/and\u0001control',
  'ü/é/日本語.txt',
  'emoji/😀 \uffff \u2028.bin',
  'deep/a/b/c/d/e/f.dat',
];

function planOf(paths: string[], md5: boolean): PlannedFiles {
  const files = new PlannedFiles({ expectedFiles: paths.length });
  paths.forEach((path, i) => {
    files.add(path);
    files.setDigest('sha256', i, hash('sha256', i));
    if (md5) files.setDigest('md5', i, hash('md5', i));
    const size = [0, 7, 4096, 2 ** 40, 10 ** 15][i % 5];
    files.setWalked(i, { size, ino: i, dev: 1, mtimeMs: 0, ctimeMs: 0 }, true);
  });
  return files;
}

// Enough entries that both lists cross their 1 MiB pieces.
const paths = [
  ...UNUSUAL,
  ...Array.from({ length: 12_000 }, (_, i) => `run-${i % 13}/sample ${i % 7}/f-${i}.dat`),
];

describe('the stored manifest and the provenance written from the plan', () => {
  it('writes the manifest as its lines sorted by path, byte for byte', () => {
    const files = planOf(paths, false);
    const written = Buffer.concat([
      ...byteChunks(files.sortedByPath(), storedManifestLines(files)),
    ]);
    const lines = paths.map((path, i) => ({ path, line: `${hash('sha256', i)}  ${path}\n` }));
    lines.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    expect(written.toString()).toBe(lines.map((l) => l.line).join(''));
  });

  it.each([false, true])('writes the provenance as JSON.stringify does (md5 %s)', (md5) => {
    const files = planOf(paths, md5);
    const head = { format: 'provisioner-provenance/1' } as Omit<Provenance, 'files'>;
    const list = paths.map((path, i) => ({
      path,
      size: files.size[i],
      sha256: hash('sha256', i),
      ...(md5 ? { md5: hash('md5', i) } : {}),
    }));
    const pieces = [...provenanceChunks(head, paths.length, provenanceFileEntries(files, md5))];
    const written = Buffer.concat(pieces);
    expect(pieces.length).toBeGreaterThan(3);
    expect(written.equals(provenanceText(head, list.length, (i) => list[i]))).toBe(true);
    expect(written.toString()).toBe(`${JSON.stringify({ ...head, files: list }, null, 2)}\n`);
  });
});
