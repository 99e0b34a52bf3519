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

/**
 * provenance.json's text: JSON.stringify(provenance, null, 2) and a newline, with the files
 * (`count` of them, `fileAt` each) written one at a time into one buffer of the text's size,
 * measured in a first pass. An import of 300,000 files never holds them as objects, nor the
 * text a second time as a string.
 */
export function provenanceText(
  head: Omit<Provenance, 'files'>,
  count: number,
  fileAt: (index: number) => ProvenanceFile,
): Buffer {
  const empty = `${JSON.stringify({ ...head, files: [] }, null, 2)}\n`;
  if (count === 0) return Buffer.from(empty);
  const opening = `${empty.slice(0, -'[]\n}\n'.length)}[\n`;
  const closing = '\n  ]\n}\n';
  // Each file as the whole document's stringify nests it: two levels in.
  const entry = (index: number) =>
    `${index > 0 ? ',\n' : ''}    ${JSON.stringify(fileAt(index), null, 2).replace(/\n/g, '\n    ')}`;
  let size = Buffer.byteLength(opening) + closing.length;
  for (let i = 0; i < count; i++) size += Buffer.byteLength(entry(i));
  const text = Buffer.allocUnsafe(size);
  let at = text.write(opening);
  for (let i = 0; i < count; i++) at += text.write(entry(i), at);
  text.write(closing, at);
  return text;
}
