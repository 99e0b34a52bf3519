import { ChecksumAlgorithm } from '../sources/source-system';

export interface ProvenanceFile {
  path: string;
  size: number;
  sha256: string;
  md5?: string;
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
  verification: { result: 'passed'; manifests: ChecksumAlgorithm[]; computed: ChecksumAlgorithm[] };
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

/** provenance.json's text whole (tests, small documents): see provenanceChunks. */
export function provenanceText(
  head: Omit<Provenance, 'files'>,
  count: number,
  fileAt: (index: number) => ProvenanceFile,
): Buffer {
  return Buffer.concat([...provenanceChunks(head, count, fileAt)]);
}

/** Size of the pieces provenanceChunks hands out. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * provenance.json's text, JSON.stringify(provenance, null, 2) and a newline, in pieces of about
 * CHUNK_BYTES, with the files (`count` of them, `fileAt` each) written one at a time, each piece
 * only when the one before was taken: an import of a million files never holds them as
 * objects, nor the text whole.
 */
export function* provenanceChunks(
  head: Omit<Provenance, 'files'>,
  count: number,
  fileAt: (index: number) => ProvenanceFile,
): Generator<Buffer> {
  const empty = `${JSON.stringify({ ...head, files: [] }, null, 2)}\n`;
  if (count === 0) {
    yield Buffer.from(empty);
    return;
  }
  const opening = `${empty.slice(0, -'[]\n}\n'.length)}[\n`;
  const closing = '\n  ]\n}\n';
  let pending: string[] = [opening];
  let length = opening.length;
  for (let index = 0; index < count; index++) {
    // Each file as the whole document's stringify nests it: two levels in.
    const entry = `${index > 0 ? ',\n' : ''}    ${JSON.stringify(fileAt(index), null, 2).replace(/\n/g, '\n    ')}`;
    pending.push(entry);
    length += entry.length;
    if (length >= CHUNK_BYTES) {
      yield Buffer.from(pending.join(''));
      pending = [];
      length = 0;
    }
  }
  pending.push(closing);
  yield Buffer.from(pending.join(''));
}
