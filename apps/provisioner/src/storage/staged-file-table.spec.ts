import { StagedFileTable } from './staged-file-table';
import { formatJournal, JournalLines, parseJournal } from './staged-files-journal';
import type { StagedFile } from './storage-system';

const staged = (path: string, n: number, md5: string | null = 'c'.repeat(32)): StagedFile => ({
  path,
  size: n,
  sha256: n.toString(16).padStart(64, '0'),
  md5,
  source: { ino: 1000 + n, size: n, mtimeMs: 1795568496829.125 + n, ctimeMs: 1795568496830.5 },
});

describe('StagedFileTable', () => {
  it('gives back each entry as set, the later entry of a path in the place of the first', () => {
    const table = new StagedFileTable();
    const files = Array.from({ length: 3000 }, (_, i) => staged(`run-${i % 7}/f-${i}.dat`, i));
    for (const file of files) table.set(file);
    table.set(staged('run-3/f-3.dat', 99, null));
    expect(table.count).toBe(files.length);
    files.forEach((file, i) =>
      expect(table.at(i)).toEqual(i === 3 ? staged(file.path, 99, null) : file),
    );
  });

  it('holds unicode paths, and views chosen rows as InheritedFiles', () => {
    const table = new StagedFileTable();
    ['ü/é.txt', 'top', 'emoji/😀.bin'].forEach((path, i) => table.set(staged(path, i)));
    const view = table.rows(Uint32Array.of(2, 0));
    expect(view.length).toBe(2);
    expect([view.at(0)?.path, view.at(1)?.path, view.at(2)]).toEqual([
      'emoji/😀.bin',
      'ü/é.txt',
      undefined,
    ]);
  });
});

describe('JournalLines', () => {
  const entries = [staged('a/one.txt', 1), staged('b/zwei ü.txt', 2, null), staged('a/one.txt', 3)];

  it('reads what parseJournal reads, whatever the chunks, skipping damaged lines', () => {
    const text = `${formatJournal(entries)}not json\n{"path":"x"}\n${formatJournal([staged('c', 4)]).slice(0, 40)}`;
    const bytes = Buffer.from(text);
    for (const size of [1, 7, 64, bytes.length]) {
      const read: StagedFile[] = [];
      const lines = new JournalLines((entry) => read.push(entry));
      for (let at = 0; at < bytes.length; at += size) lines.push(bytes.subarray(at, at + size));
      lines.end();
      expect(read).toEqual(entries);
    }
    expect(parseJournal(text)).toEqual([entries[2], entries[1]]);
  });

  it('reads an empty journal as no entries', () => {
    const lines = new JournalLines(() => {
      throw new Error('no entry expected');
    });
    lines.push(Buffer.alloc(0));
    lines.end();
    expect(parseJournal('')).toEqual([]);
  });
});
