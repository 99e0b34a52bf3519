import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const DATASETS_PER_SUBMISSION = 100;
const PAYLOAD = 'synthetic payload\n';
const PAYLOAD_SHA256 = createHash('sha256').update(PAYLOAD).digest('hex');

const submissionRef = (s: number) => `SUB-${String(s).padStart(5, '0')}`;
const datasetId = (d: number) => `DS-${String(d).padStart(6, '0')}`;
const projectOf = (s: number) => `PRJ-${String(s % 50).padStart(2, '0')}`;

/**
 * Grows a drop-zone to `to` ready datasets (from `from`), 100 per completed submission, each
 * with dataset.json, a one-file payload, its manifest and the ready marker. With `imported`,
 * storage also holds that fraction of them (a published dataset directory), as in a catalog
 * where most data arrived long ago.
 */
export function growDropzone(root: string, storage: string, from: number, to: number, importedEvery: number): void {
  for (let d = from; d < to; d++) {
    const s = Math.floor(d / DATASETS_PER_SUBMISSION);
    const id = datasetId(d);
    const dir = join(root, 'datasets', id);
    mkdirSync(join(dir, 'payload'), { recursive: true });
    writeFileSync(join(dir, 'payload', 'data.txt'), PAYLOAD);
    writeFileSync(join(dir, 'manifest-sha256.txt'), `${PAYLOAD_SHA256}  data.txt\n`);
    writeFileSync(join(dir, 'dataset.json'), JSON.stringify({ dataset_id: id, submission: submissionRef(s), title: `Dataset ${d}`, metadata: {} }));
    writeFileSync(join(dir, '.ready'), '');
    if (d % importedEvery !== 0) {
      mkdirSync(join(storage, 'projects', projectOf(s), submissionRef(s), 'data', 'raw', id), { recursive: true });
    }
  }
  // Rewrite each touched submission.json with its full list of datasets.
  const first = Math.floor(from / DATASETS_PER_SUBMISSION);
  const last = Math.ceil(to / DATASETS_PER_SUBMISSION);
  for (let s = first; s < last; s++) {
    const ids: string[] = [];
    for (let d = s * DATASETS_PER_SUBMISSION; d < Math.min(to, (s + 1) * DATASETS_PER_SUBMISSION); d++) ids.push(datasetId(d));
    const dir = join(root, 'submissions', submissionRef(s));
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'submission.json'),
      JSON.stringify({ ref: submissionRef(s), title: `Submission ${s}`, status: 'completed', project: projectOf(s), custodians: [], datasets: ids }),
    );
  }
}
