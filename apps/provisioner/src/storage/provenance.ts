import { byteChunks, type EntryWriter, textEntries } from '../common/byte-chunks';
import { ChecksumAlgorithm } from '../sources/source-system';
import type { StorageSystem, StoredEncryption } from './storage-system';

export interface ProvenanceFile {
  path: string;
  size: number;
  sha256: string;
  md5?: string;
}

/** A validator the dataset passed before it was published (SOURCES[].validators). */
export interface ProvenanceValidator {
  name: string;
  result: 'passed';
  /** What it read: the staged files, or a copy checked against the same checksums (S3, archive mode). */
  data: 'staged' | 'copied';
}

/** The content of <dataset>/.provisioner/provenance.json. */
export interface Provenance {
  format: 'provisioner-provenance/1';
  source: { name: string; type: string };
  submission: { ref: string; project: string };
  dataset: { dataset_id: string; title: string; metadata: unknown };
  import: {
    id: string;
    attempt: number;
    queued_at: string | null;
    started_at: string;
    staged_at: string;
    /** Files earlier attempts of this import had copied that this one verified and kept. */
    kept_from_earlier_attempts?: { files: number; bytes: number };
  };
  versions: Record<string, string>;
  totals: { files: number; bytes: number };
  /**
   * Present in archive mode only: the files are Crypt4GH bodies, each header at
   * `<headers>/<path>`, encrypted for `recipient` (the archive's public key, base64). Sizes and
   * checksums are the plain-text's.
   */
  encryption?: StoredEncryption;
  verification: { result: 'passed'; manifests: ChecksumAlgorithm[]; computed: ChecksumAlgorithm[] };
  /** Present where the source has validators: each one the dataset passed, in the order run. */
  validation?: { validators: ProvenanceValidator[] };
  files: ProvenanceFile[];
}

export function parseProvenance(content: Buffer | null): Provenance | null {
  if (!content) return null;
  try {
    const parsed = JSON.parse(content.toString('utf8')) as Partial<Provenance>;
    return parsed.format === 'provisioner-provenance/1' ? (parsed as Provenance) : null;
  } catch {
    return null;
  }
}

/** Everything provenance.json says but its list of files. */
export type ProvenanceHead = Omit<Provenance, 'files'>;

/**
 * Where the files start in provenance.json as provenanceChunks writes it (JSON.stringify's
 * layout, `files` last): a line break and two spaces, so only a top-level key (a string in the
 * document cannot hold a raw line break; nested keys are indented further).
 */
const FILES_KEY = '\n  "files": [';
/** Read at a time while looking for FILES_KEY: the head is this size or a few times it. */
const HEAD_PIECE_BYTES = 64 * 1024;

/**
 * The provenance of a published dataset without its list of files, reading no further than
 * where the list starts: a million files' provenance is ~150 MB, and a registration, a repeated
 * import request or an import record needs only its head (totals, import, submission). Null when
 * absent or not a provenance document.
 */
export async function readProvenanceHead(
  storage: Pick<StorageSystem, 'readObject'>,
  path: string,
): Promise<ProvenanceHead | null> {
  const pieces: Buffer[] = [];
  let read = 0;
  for (;;) {
    const piece = await storage.readObject(path, { start: read, length: HEAD_PIECE_BYTES });
    if (piece === null) return null;
    pieces.push(piece);
    read += piece.length;
    // Decoded and searched whole each time: a character or the key may straddle two pieces.
    const text = Buffer.concat(pieces).toString('utf8');
    const at = text.indexOf(FILES_KEY);
    if (at >= 0) return headOf(text.slice(0, at).replace(/,$/, '') + '\n}\n');
    if (piece.length < HEAD_PIECE_BYTES) return headOf(text);
  }
}

function headOf(text: string): ProvenanceHead | null {
  const provenance = parseProvenance(Buffer.from(text));
  if (provenance === null) return null;
  const head: ProvenanceHead & { files?: unknown } = { ...provenance };
  delete head.files;
  return head;
}

/** provenance.json's text whole (tests, small documents): see provenanceChunks. */
export function provenanceText(
  head: Omit<Provenance, 'files'>,
  count: number,
  fileAt: (index: number) => ProvenanceFile,
): Buffer {
  return Buffer.concat([
    ...provenanceChunks(
      head,
      count,
      textEntries((i) => fileEntry(fileAt(i))),
    ),
  ]);
}

/**
 * One file as the whole document's JSON.stringify(…, null, 2) nests it, two levels in, written
 * from ProvenanceFile's keys in their order (ProvenanceEntries writes the same from columns).
 */
export function fileEntry({ path, size, sha256, md5 }: ProvenanceFile): string {
  const md5Line = md5 === undefined ? '' : `,\n      "md5": ${JSON.stringify(md5)}`;
  return `    {\n      "path": ${JSON.stringify(path)},\n      "size": ${JSON.stringify(size)},\n      "sha256": ${JSON.stringify(sha256)}${md5Line}\n    }`;
}

/** Between two files of the list. */
const BETWEEN_FILES = Buffer.from(',\n');

/**
 * provenance.json's text, JSON.stringify(provenance, null, 2) and a newline, in pieces, with the
 * files (`count` of them, each as `files` writes it: see fileEntry) written one at a time, each
 * piece only when the one before was taken: an import of a million files never holds them as
 * objects, nor the text whole.
 */
export function* provenanceChunks(
  head: Omit<Provenance, 'files'>,
  count: number,
  files: EntryWriter,
): Generator<Buffer> {
  const empty = `${JSON.stringify({ ...head, files: [] }, null, 2)}\n`;
  if (count === 0) {
    yield Buffer.from(empty);
    return;
  }
  yield Buffer.from(`${empty.slice(0, -'[]\n}\n'.length)}[\n`);
  yield* byteChunks(indexes(count), files, BETWEEN_FILES);
  yield Buffer.from('\n  ]\n}\n');
}

function* indexes(count: number): Generator<number> {
  for (let i = 0; i < count; i++) yield i;
}
