import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface DatasetSpec {
  submission: string;
  title?: string;
  files: Record<string, string | Buffer>;
  /** Which manifests to write; default sha256. */
  manifests?: ('sha256' | 'md5')[];
  /** Replaces the generated manifest text (one entry per algorithm). */
  manifestText?: Partial<Record<'sha256' | 'md5', string>>;
  ready?: boolean;
  /** The catalog accession dataset.json names. */
  accession?: string;
}

export function digest(algorithm: 'sha256' | 'md5', content: string | Buffer): string {
  return createHash(algorithm).update(content).digest('hex');
}

/**
 * A file of `size` zero bytes that takes no disk space (sparse): cheap to create, yet long enough
 * to copy for a test to act while the copy runs.
 */
export function writeSparseZeros(path: string, size: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'w');
  ftruncateSync(fd, size);
  closeSync(fd);
}

/** The sha256 of `size` zero bytes (what a manifest lists for writeSparseZeros), in 1 MiB steps. */
export function zeroSha256(size: number): string {
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(1024 * 1024);
  for (let done = 0; done < size; done += chunk.length) hash.update(chunk);
  return hash.digest('hex');
}

export type SpecialFileKind = 'fifo' | 'socket' | 'device';

/**
 * A FIFO, a Unix socket or a character device at `path`, what a hostile depositor leaves where a
 * file is expected. The socket is bound by a child process killed at once (so nothing unlinks
 * it); the device (like /dev/null, 1:3) needs root, which the robustness suite has.
 */
export function makeSpecialFile(path: string, kind: SpecialFileKind): void {
  mkdirSync(dirname(path), { recursive: true });
  if (kind === 'fifo') execFileSync('mkfifo', [path]);
  else if (kind === 'device') execFileSync('mknod', [path, 'c', '1', '3']);
  else {
    const bindAndDie = `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`;
    try {
      execFileSync(process.execPath, ['-e', bindAndDie], { stdio: 'ignore' });
    } catch {
      // Killed on purpose once bound: the socket file stays.
    }
    if (!lstatSync(path).isSocket()) throw new Error(`no socket made at ${path}`);
  }
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `prov-${prefix}-`));
}

/** Builds the drop-zone layout of the contract in a directory (also a landing-zone dataset). */
export class DropzoneFixture {
  constructor(readonly root: string) {}

  submission(
    ref: string,
    fields: {
      status?: string;
      project?: string;
      title?: string;
      datasets?: (string | { dataset_id: string })[];
      /** The submitting partner (a catalog partner's name or acronym). */
      partner?: string;
    } = {},
  ): this {
    const document = {
      ref,
      title: fields.title ?? `Submission ${ref}`,
      status: fields.status ?? 'completed',
      project: fields.project ?? 'PRJ1',
      custodians: [{ name: 'Data Steward', email: 'steward@example.org' }],
      datasets: fields.datasets ?? [],
      ...(fields.partner === undefined ? {} : { partner: fields.partner }),
    };
    this.write(`submissions/${ref}/submission.json`, JSON.stringify(document));
    return this;
  }

  datasetDir(id: string): string {
    return join(this.root, 'datasets', id);
  }

  dataset(id: string, spec: DatasetSpec): this {
    writeDatasetDirectory(this.datasetDir(id), spec, {
      dataset_id: id,
      submission: spec.submission,
      title: spec.title ?? `Dataset ${id}`,
      metadata: { kind: 'test' },
      ...(spec.accession === undefined ? {} : { accession: spec.accession }),
    });
    return this;
  }

  /** What storage holds of a sparseDataset once published, sorted. */
  static readonly SPARSE_DATASET_OBJECTS = [
    '.provisioner/manifest-sha256.txt',
    '.provisioner/provenance.json',
    'big/zeros.bin',
    'small.txt',
  ];

  /**
   * A ready dataset of `big/zeros.bin`, a sparse file of `size` zero bytes (cheap to write, long
   * enough to copy that a fault lands mid-copy), and `small.txt`.
   */
  sparseDataset(id: string, submission: string, size: number): this {
    this.dataset(id, { submission, files: { 'small.txt': 'small' }, manifestText: { sha256: '' } });
    writeSparseZeros(join(this.datasetDir(id), 'payload/big/zeros.bin'), size);
    writeFileSync(
      join(this.datasetDir(id), 'manifest-sha256.txt'),
      `${zeroSha256(size)}  big/zeros.bin\n${digest('sha256', 'small')}  small.txt\n`,
    );
    return this;
  }

  private write(path: string, content: string): void {
    mkdirSync(dirname(join(this.root, path)), { recursive: true });
    writeFileSync(join(this.root, path), content);
  }
}

/** manifest(s), payload/ and .ready; dataset.json when `datasetJson` is given. */
export function writeDatasetDirectory(
  dir: string,
  spec: DatasetSpec,
  datasetJson?: Record<string, unknown>,
): void {
  mkdirSync(join(dir, 'payload'), { recursive: true });
  if (datasetJson) writeFileSync(join(dir, 'dataset.json'), JSON.stringify(datasetJson));
  for (const [path, content] of Object.entries(spec.files)) {
    mkdirSync(dirname(join(dir, 'payload', path)), { recursive: true });
    writeFileSync(join(dir, 'payload', path), content);
  }
  for (const algorithm of spec.manifests ?? ['sha256']) {
    const text =
      spec.manifestText?.[algorithm] ??
      Object.entries(spec.files)
        .map(([path, content]) => `${digest(algorithm, content)}  ${path}\n`)
        .join('');
    writeFileSync(join(dir, `manifest-${algorithm}.txt`), text);
  }
  if (spec.ready !== false) writeFileSync(join(dir, '.ready'), '');
}
