import { createHash, randomFillSync } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, ftruncateSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fmt } from '../lib/report';

export interface FileSpec {
  path: string;
  size: number;
}

/** A 1 GiB mix: three large files and a thousand small ones of 1–200 KiB. */
export function mixedDataset(totalBytes: number): FileSpec[] {
  const sizes = Array.from({ length: 1000 }, (_, i) => 1024 + ((i * 7919) % 200) * 1024);
  // The small files (~100 MiB) take at most a third of a smaller total (--quick's 64 MiB), so
  // the three large files keep a size; at 1 GiB they are as they always were.
  const scale = Math.min(1, totalBytes / 3 / sizes.reduce((sum, size) => sum + size, 0));
  const small: FileSpec[] = sizes.map((size, i) => ({
    path: `small/${String(Math.floor(i / 100)).padStart(2, '0')}/part-${String(i).padStart(4, '0')}.dat`,
    size: Math.max(1, Math.floor(size * scale)),
  }));
  const smallBytes = small.reduce((sum, f) => sum + f.size, 0);
  const large = Math.floor((totalBytes - smallBytes) / 3);
  return [
    { path: 'large/reads-1.bam', size: large },
    { path: 'large/reads-2.bam', size: large },
    { path: 'large/variants.vcf', size: totalBytes - smallBytes - 2 * large },
    ...small,
  ];
}

export function smallFiles(count: number, size: number): FileSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    path: `d${String(Math.floor(i / 500)).padStart(2, '0')}/f-${String(i).padStart(5, '0')}.txt`,
    size,
  }));
}

/** One dataset the import suites measure: its key (import ids start with it), its name, its files. */
export interface ImportCase {
  key: string;
  name: string;
  files: FileSpec[];
}

/** The import suites' two datasets: 1 GiB mixed and 10,000 small files (--quick: 1/16 and 1,000). */
export function importCases(quick: boolean): ImportCase[] {
  const scale = quick ? 1 / 16 : 1;
  return [
    {
      key: 'MIXED',
      name: `${fmt(scale, 3)} GiB mixed (3 large files + 1,000 small)`,
      files: mixedDataset(Math.round(1024 ** 3 * scale)),
    },
    {
      key: 'SMALL',
      name: `${quick ? '1,000' : '10,000'} small files of 4 KiB`,
      files: smallFiles(quick ? 1000 : 10_000, 4096),
    },
  ];
}

/**
 * Writes a ready drop-zone dataset (payload, sha256 manifest, dataset.json, marker) and its
 * submission. Contents are pseudo-random (not sparse, not all zeros), so neither the copy nor
 * `cp` can take a shortcut; a 64 MiB random block is reused at shifting offsets to keep this fast.
 * With `sparse`, large files are holes instead (for the memory test, where only size matters).
 */
export function writeImportDataset(root: string, datasetId: string, files: FileSpec[], sparse = false): void {
  const block = randomFillSync(Buffer.allocUnsafe(64 * 1024 * 1024));
  const dir = join(root, 'datasets', datasetId);
  const manifest: string[] = [];
  let shift = 0;
  for (const file of files) {
    const path = join(dir, 'payload', file.path);
    mkdirSync(dirname(path), { recursive: true });
    const hash = createHash('sha256');
    const fd = openSync(path, 'w');
    try {
      if (sparse) {
        ftruncateSync(fd, file.size);
        const zeros = Buffer.alloc(1024 * 1024);
        for (let left = file.size; left > 0; left -= zeros.length) hash.update(left >= zeros.length ? zeros : zeros.subarray(0, left));
      } else {
        for (let written = 0; written < file.size; ) {
          const start = (shift + written) % (block.length - 1);
          const n = Math.min(file.size - written, block.length - start);
          const chunk = block.subarray(start, start + n);
          writeSync(fd, chunk);
          hash.update(chunk);
          written += n;
        }
      }
    } finally {
      closeSync(fd);
    }
    shift += 4099;
    manifest.push(`${hash.digest('hex')}  ${file.path}`);
  }
  writeFileSync(join(dir, 'manifest-sha256.txt'), `${manifest.join('\n')}\n`);
  markReady(root, datasetId);
}

/**
 * Another ready dataset with the same payload as hard links (same inodes, so the same warm
 * page cache and no time spent writing): every measured round imports a dataset of its own,
 * since an import id is never imported twice.
 */
export function cloneImportDataset(root: string, datasetId: string, cloneId: string): void {
  const from = join(root, 'datasets', datasetId);
  const dir = join(root, 'datasets', cloneId);
  mkdirSync(dir, { recursive: true });
  const linked = spawnSync('cp', ['-al', join(from, 'payload'), join(dir, 'payload')]);
  if (linked.status !== 0) throw new Error(`cp -al failed: ${linked.stderr}`);
  copyFileSync(join(from, 'manifest-sha256.txt'), join(dir, 'manifest-sha256.txt'));
  markReady(root, cloneId);
}

/** dataset.json, the marker, and a completed submission listing the dataset. */
function markReady(root: string, datasetId: string): void {
  const dir = join(root, 'datasets', datasetId);
  writeFileSync(join(dir, 'dataset.json'), JSON.stringify({ dataset_id: datasetId, submission: `SUB-${datasetId}`, title: datasetId }));
  writeFileSync(join(dir, '.ready'), '');
  const submission = join(root, 'submissions', `SUB-${datasetId}`);
  mkdirSync(submission, { recursive: true });
  writeFileSync(
    join(submission, 'submission.json'),
    JSON.stringify({ ref: `SUB-${datasetId}`, title: datasetId, status: 'completed', project: 'BENCH', custodians: [], datasets: [datasetId] }),
  );
}
