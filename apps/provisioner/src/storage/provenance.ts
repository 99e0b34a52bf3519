import { ChecksumAlgorithm } from '../sources/dataset-directory/manifest';

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
