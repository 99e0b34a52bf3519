import { parseProvenance, Provenance, provenanceText } from './provenance';

const head: Omit<Provenance, 'files'> = {
  format: 'provisioner-provenance/1',
  source: { name: 'dropzone', type: 'dropzone' },
  submission: { ref: 'SUB-1', project: 'P1' },
  dataset: {
    dataset_id: 'DS-1',
    title: 'A "title"\nover lines',
    metadata: { nested: [1, { a: 'ü' }] },
  },
  import: {
    id: 'dropzone-dataset-DS-1',
    attempt: 1,
    queued_at: null,
    started_at: '2026-11-23T00:00:00.000Z',
    staged_at: '2026-11-23T00:00:01.000Z',
  },
  versions: { provisioner: '0.1.0' },
  totals: { files: 3, bytes: 6 },
  verification: { result: 'passed', manifests: ['sha256', 'md5'], computed: ['sha256', 'md5'] },
};

describe('provenanceText', () => {
  it('writes exactly what JSON.stringify(provenance, null, 2) writes, with or without files', () => {
    const files = [
      { path: 'a.txt', size: 1, sha256: 'aa', md5: 'a' },
      { path: 'dir/ü "quoted"\u2028.txt', size: 2, sha256: 'bb' },
      { path: 'c', size: 3, sha256: 'cc', md5: 'c' },
    ];
    for (const list of [files, []]) {
      const text = provenanceText(head, list.length, (i) => list[i]).toString();
      expect(text).toBe(`${JSON.stringify({ ...head, files: list }, null, 2)}\n`);
      expect(parseProvenance(Buffer.from(text))?.files).toEqual(list);
    }
  });
});
