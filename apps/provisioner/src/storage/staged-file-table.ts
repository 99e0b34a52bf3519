import { copied, PathTable } from '../common/path-table';
import type { InheritedFiles, StagedFile } from './storage-system';

/**
 * Staged files read back from a journal, as columns beside a PathTable (about 110 bytes and the
 * name a file): `set` replaces the entry of a path already held, as a journal's later line
 * does.
 */
export class StagedFileTable extends PathTable {
  private size = new Float64Array(this.capacity);
  private sourceSize = new Float64Array(this.capacity);
  private ino = new Float64Array(this.capacity);
  private mtimeMs = new Float64Array(this.capacity);
  private ctimeMs = new Float64Array(this.capacity);
  private sha256: Buffer = Buffer.alloc(this.capacity * 32);
  /** md5 and whether there is one (a journal entry's md5 may be null). */
  private md5: Buffer = Buffer.alloc(this.capacity * 16);
  private hasMd5 = new Uint8Array(this.capacity);

  set(file: StagedFile): void {
    let i = this.indexOf(file.path);
    if (i < 0) {
      this.add(file.path);
      i = this.count - 1;
    }
    this.size[i] = file.size;
    this.sourceSize[i] = file.source.size;
    this.ino[i] = file.source.ino;
    this.mtimeMs[i] = file.source.mtimeMs;
    this.ctimeMs[i] = file.source.ctimeMs;
    this.sha256.write(file.sha256, i * 32, 32, 'hex');
    this.hasMd5[i] = file.md5 === null ? 0 : 1;
    if (file.md5 !== null) this.md5.write(file.md5, i * 16, 16, 'hex');
  }

  at(i: number): StagedFile {
    return {
      path: this.path(i),
      size: this.size[i],
      sha256: this.sha256.toString('hex', i * 32, i * 32 + 32),
      md5: this.hasMd5[i] ? this.md5.toString('hex', i * 16, i * 16 + 16) : null,
      source: {
        ino: this.ino[i],
        size: this.sourceSize[i],
        mtimeMs: this.mtimeMs[i],
        ctimeMs: this.ctimeMs[i],
      },
    };
  }

  /** The entries at `rows`, in that order, as InheritedFiles. */
  rows(rows: Uint32Array): InheritedFiles {
    return {
      length: rows.length,
      at: (k) => (k >= 0 && k < rows.length ? this.at(rows[k]) : undefined),
    };
  }

  protected override grown(n: number): void {
    this.size = copied(this.size, new Float64Array(n));
    this.sourceSize = copied(this.sourceSize, new Float64Array(n));
    this.ino = copied(this.ino, new Float64Array(n));
    this.mtimeMs = copied(this.mtimeMs, new Float64Array(n));
    this.ctimeMs = copied(this.ctimeMs, new Float64Array(n));
    this.hasMd5 = copied(this.hasMd5, new Uint8Array(n));
    this.sha256 = grownBuffer(this.sha256, n * 32);
    this.md5 = grownBuffer(this.md5, n * 16);
  }
}

function grownBuffer(from: Buffer, size: number): Buffer {
  const to = Buffer.alloc(size);
  from.copy(to);
  return to;
}
