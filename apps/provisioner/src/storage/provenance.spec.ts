import { parseProvenance, Provenance, provenanceText, readProvenanceHead } from './provenance';
import type { ByteRange } from './storage-system';

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
      { path: '\\', size: 0, sha256: 'dd', md5: undefined },
    ];
    for (const list of [files, []]) {
      const text = provenanceText(head, list.length, (i) => list[i]).toString();
      expect(text).toBe(`${JSON.stringify({ ...head, files: list }, null, 2)}\n`);
      expect(parseProvenance(Buffer.from(text))?.files).toEqual(list);
    }
  });
});

/** A store holding one object, counting the bytes each read hands out. */
function storeOf(content: Buffer | null) {
  const reads: ByteRange[] = [];
  return {
    reads,
    bytesRead: () =>
      reads.reduce((sum, r) => sum + Math.min(r.length, content!.length - r.start), 0),
    readObject: (_path: string, range?: ByteRange) => {
      if (range) reads.push(range);
      if (content === null) return Promise.resolve(null);
      return Promise.resolve(
        range ? content.subarray(range.start, range.start + range.length) : content,
      );
    },
  };
}

describe('readProvenanceHead', () => {
  const fileAt = (i: number) => ({
    path: `sample-${i % 20}/run-${i % 15}/f-${String(i).padStart(7, '0')}.dat`,
    size: 4096,
    sha256: 'a'.repeat(64),
  });

  it('reads the head of a 20,000-file provenance and stops where the list of files starts', async () => {
    const text = provenanceText(head, 20_000, fileAt);
    expect(text.length).toBeGreaterThan(3_000_000);
    const store = storeOf(text);
    expect(await readProvenanceHead(store, 'p.json')).toEqual(head);
    // One piece of 64 KiB, not the 3 MB document.
    expect(store.bytesRead()).toBeLessThanOrEqual(64 * 1024);
  });

  it('reads on across pieces when the metadata is larger than one, and keeps look-alike keys in it', async () => {
    const metadata = {
      // A key named "files" nested in the metadata, and a string that spells the marker.
      files: ['x'],
      note: '\n  "files": [ is only text here',
      long: 'é'.repeat(100_000),
    };
    const big = { ...head, dataset: { ...head.dataset, metadata } };
    const text = provenanceText(big, 1000, fileAt);
    const store = storeOf(text);
    expect(await readProvenanceHead(store, 'p.json')).toEqual(big);
    expect(store.reads.length).toBeGreaterThan(1);
    expect(store.bytesRead()).toBeLessThan(text.length);
  });

  it('reads a provenance without files whole, and answers null for no object or another document', async () => {
    expect(await readProvenanceHead(storeOf(provenanceText(head, 0, fileAt)), 'p')).toEqual(head);
    expect(await readProvenanceHead(storeOf(null), 'p')).toBeNull();
    expect(await readProvenanceHead(storeOf(Buffer.from('{"format":"other"}')), 'p')).toBeNull();
    expect(await readProvenanceHead(storeOf(Buffer.from('not json')), 'p')).toBeNull();
  });
});
