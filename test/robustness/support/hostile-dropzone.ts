import { execFileSync } from 'node:child_process';
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  digest,
  DropzoneFixture,
  makeSpecialFile,
} from '../../../apps/provisioner/test/support/dropzone-fixture';

/**
 * A drop zone as hostile depositors could fill it (issue 14): every metadata slot of a dataset
 * (dataset.json, both manifests, the marker) and every directory slot (the dataset directory,
 * payload/) replaced by each kind of link, special file, wrong kind of entry and oversized file;
 * payloads holding the same; names no path should have; a manifest of 1.5 million lines over the
 * cap and one of hundreds of thousands under it. The victim is another depositor's submission
 * whose data must never end up anywhere else.
 */

export const SECRET = 'SECRET-provisioner-keys-do-not-leak-0123456789';
export const VICTIM_SUBMISSION = 'SUB-VICTIM';
export const VICTIM_DATASET = 'DS-VICTIM';
export const HOSTILE_SUBMISSION = 'SUB-HOSTILE';
export const HOSTILE_PROJECT = 'HOSTILE';
export const MANY_DATASETS_SUBMISSION = 'SUB-NAMES-80K';
export const AT_CAP_SUBMISSION = 'SUB-NAMES-2500';

export type FileSlot = 'dataset.json' | 'manifest-sha256.txt' | 'manifest-md5.txt' | '.ready';
export type DirectorySlot = 'dataset' | 'payload';

/** How a slot is spoiled: each kind of link, special file, wrong entry or size. */
export type Spoiler =
  | 'link-outside'
  | 'link-victim'
  | 'link-dangling'
  | 'link-chain'
  | 'link-to-directory'
  | 'hardlink-outside'
  | 'fifo'
  | 'socket'
  | 'device'
  | 'directory'
  | 'regular-file'
  | 'oversized';

export const FILE_SPOILERS: Spoiler[] = [
  'link-outside',
  'link-victim',
  'link-dangling',
  'link-chain',
  'link-to-directory',
  'hardlink-outside',
  'fifo',
  'socket',
  'device',
  'directory',
  'oversized',
];

export const DIRECTORY_SPOILERS: Spoiler[] = [
  'link-victim',
  'link-outside',
  'link-dangling',
  'link-chain',
  'fifo',
  'socket',
  'device',
  'regular-file',
];

export interface SpoiledDataset {
  id: string;
  slot: FileSlot | DirectorySlot;
  spoiler: Spoiler;
}

export interface PayloadCase {
  id: string;
  /**
   * The problem codes of the import's rejection (sorted), 'imported' for what is accepted, or
   * the reason a listing already gives (the POST answers 409 with it).
   */
  expected: string[] | 'imported' | { notReady: string };
}

export interface HostileDropzone {
  root: string;
  secretFile: string;
  spoiled: SpoiledDataset[];
  payloads: PayloadCase[];
  /** Submissions whose project name is no single path segment: each lists one ready dataset. */
  unsafeProjects: { ref: string; dataset: string }[];
  /** The ids of the two big-manifest datasets: over the cap, and under it with many lines. */
  hugeManifest: string;
  longManifest: string;
  /** Good datasets, and how to spoil each once its import is queued. */
  lateTargets: { id: string; spoil(): void }[];
}

const METADATA_MAX_BYTES = 1024 * 1024;

function sha256Line(path: string, content: string): string {
  return `${digest('sha256', content)}  ${path}\n`;
}

/** A manifest of `lines` lines written in 1 MiB pieces, never held whole. */
function writeLongManifest(path: string, lines: number): void {
  const fd = openSync(path, 'w');
  let chunk = '';
  for (let i = 0; i < lines; i++) {
    chunk += `${'5f'.repeat(32)}  run-${i % 1000}/sample-${String(i).padStart(8, '0')}.fastq.gz\n`;
    if (chunk.length >= 1 << 20) {
      writeSync(fd, chunk);
      chunk = '';
    }
  }
  writeSync(fd, chunk);
  closeSync(fd);
}

export function writeHostileDropzone(
  base: string,
  options: { hugeManifestLines: number; longManifestLines: number },
): HostileDropzone {
  const root = join(base, 'dropzone');
  const outside = join(base, 'outside');
  mkdirSync(outside, { recursive: true });
  const secretFile = join(outside, 'keys.json');
  writeFileSync(
    secretFile,
    JSON.stringify({
      dataset_id: 'DS-X',
      submission: HOSTILE_SUBMISSION,
      title: SECRET,
      key: SECRET,
    }),
  );
  mkdirSync(join(outside, 'dir'), { recursive: true });
  writeFileSync(join(outside, 'dir/keys.json'), SECRET);
  const fixture = new DropzoneFixture(root);
  const files = (id: string) => ({ 'data.txt': `data of ${id}\n` });

  fixture.submission(VICTIM_SUBMISSION, { project: 'VICTIM', datasets: [VICTIM_DATASET] });
  fixture.dataset(VICTIM_DATASET, {
    submission: VICTIM_SUBMISSION,
    files: { 'data.txt': `victim data ${SECRET}\n` },
    manifests: ['sha256', 'md5'],
  });
  const victimDir = fixture.datasetDir(VICTIM_DATASET);

  const spoil = (
    path: string,
    spoiler: Spoiler,
    victim: string,
    kind: 'file' | 'directory',
  ): void => {
    rmSync(path, { recursive: true, force: true });
    switch (spoiler) {
      case 'link-outside':
        return symlinkSync(kind === 'file' ? secretFile : join(outside, 'dir'), path);
      case 'link-victim':
        return symlinkSync(victim, path);
      case 'link-dangling':
        return symlinkSync(join(outside, 'nothing-here'), path);
      case 'link-chain':
        symlinkSync(kind === 'file' ? secretFile : victim, `${path}.hop`);
        return symlinkSync(`${path}.hop`, path);
      case 'link-to-directory':
        return symlinkSync(join(outside, 'dir'), path);
      case 'hardlink-outside':
        return linkSync(secretFile, path);
      case 'fifo':
      case 'socket':
      case 'device':
        return makeSpecialFile(path, spoiler);
      case 'directory':
        return mkdirSync(path);
      case 'regular-file':
        return writeFileSync(path, SECRET);
      case 'oversized':
        return writeFileSync(path, JSON.stringify({ pad: 'x'.repeat(METADATA_MAX_BYTES) }));
    }
  };

  const spoiled: SpoiledDataset[] = [];
  const ids: string[] = [];
  const slots: FileSlot[] = ['dataset.json', 'manifest-sha256.txt', 'manifest-md5.txt', '.ready'];
  for (const slot of slots) {
    for (const spoiler of FILE_SPOILERS) {
      // The marker is never read: neither its size nor its links matter. A manifest over its
      // cap (128 MiB) is the 1.5-million-line one below.
      if (slot === '.ready' && (spoiler === 'oversized' || spoiler === 'hardlink-outside'))
        continue;
      if (slot.startsWith('manifest') && spoiler === 'oversized') continue;
      const id = `DS-${slot.replace(/[^a-z0-9]+/g, '')}-${spoiler}`;
      fixture.dataset(id, {
        submission: HOSTILE_SUBMISSION,
        files: files(id),
        manifests: ['sha256', 'md5'],
      });
      spoil(join(fixture.datasetDir(id), slot), spoiler, join(victimDir, slot), 'file');
      spoiled.push({ id, slot, spoiler });
      ids.push(id);
    }
  }
  for (const slot of ['dataset', 'payload'] as DirectorySlot[]) {
    for (const spoiler of DIRECTORY_SPOILERS) {
      const id = `DS-dir-${slot}-${spoiler}`;
      fixture.dataset(id, { submission: HOSTILE_SUBMISSION, files: files(id) });
      const dir = fixture.datasetDir(id);
      if (slot === 'dataset') spoil(dir, spoiler, victimDir, 'directory');
      else spoil(join(dir, 'payload'), spoiler, join(victimDir, 'payload'), 'directory');
      spoiled.push({ id, slot, spoiler });
      ids.push(id);
    }
  }

  // Payloads: metadata in order, the files themselves hostile.
  const payloads: PayloadCase[] = [];
  const payloadCase = (
    name: string,
    make: (payload: string) => void,
    manifest: string | Buffer,
    expected: PayloadCase['expected'],
  ) => {
    const id = `DS-payload-${name}`;
    fixture.dataset(id, { submission: HOSTILE_SUBMISSION, files: {} });
    writeFileSync(join(fixture.datasetDir(id), 'manifest-sha256.txt'), manifest);
    make(join(fixture.datasetDir(id), 'payload'));
    payloads.push({ id, expected });
    ids.push(id);
  };
  const ok = sha256Line('ok.txt', 'ok');
  const withOk = (payload: string) => writeFileSync(join(payload, 'ok.txt'), 'ok');
  payloadCase(
    'symlink',
    (p) => (withOk(p), symlinkSync(secretFile, join(p, 'x'))),
    ok + sha256Line('x', SECRET),
    ['missing_file', 'symlink'],
  );
  payloadCase('dangling', (p) => (withOk(p), symlinkSync('/nonexistent', join(p, 'x'))), ok, [
    'symlink',
  ]);
  payloadCase(
    'dir-link-victim',
    (p) => (withOk(p), symlinkSync(join(victimDir, 'payload'), join(p, 'sub'))),
    ok + sha256Line('sub/data.txt', `victim data ${SECRET}\n`),
    // A listing never looks through a link in the middle of a manifest path: not there.
    { notReady: 'files_missing' },
  );
  for (const kind of ['fifo', 'socket', 'device'] as const)
    payloadCase(kind, (p) => (withOk(p), makeSpecialFile(join(p, 'x'), kind)), ok, [kind]);
  payloadCase('control-name', (p) => (withOk(p), writeFileSync(join(p, 'a\u0007b'), 'x')), ok, [
    'control_character',
  ]);
  payloadCase(
    'invalid-utf8-name',
    (p) => (
      withOk(p),
      writeFileSync(Buffer.concat([Buffer.from(`${p}/bad-`), Buffer.from([0xc3, 0x28])]), 'x')
    ),
    ok,
    ['invalid_utf8'],
  );
  payloadCase('dotdot-in-manifest', withOk, ok + sha256Line('../../outside/keys.json', SECRET), [
    'manifest_dot_segment',
  ]);
  payloadCase('absolute-in-manifest', withOk, ok + sha256Line('/etc/passwd', 'x'), [
    'manifest_absolute_path',
  ]);
  payloadCase('long-name-in-manifest', withOk, ok + sha256Line(`${'n'.repeat(300)}.txt`, 'x'), [
    'manifest_name_too_long',
  ]);
  payloadCase('long-path-in-manifest', withOk, ok + sha256Line(`${'d/'.repeat(2100)}f`, 'x'), [
    'manifest_name_too_long',
  ]);
  payloadCase(
    'invalid-utf8-manifest',
    withOk,
    Buffer.concat([Buffer.from(`${ok}${digest('sha256', 'x')}  caf`), Buffer.from([0xe9, 0x0a])]),
    { notReady: 'manifest_invalid' },
  );
  roundThree(payloadCase, fixture, withOk, ok);

  // Hard links are files of the payload: link(2) cannot cross file systems, and with
  // fs.protected_hardlinks a depositor can only link what they own or may read and write.
  const shared = join(outside, 'shared-reference.bin');
  writeFileSync(shared, 'a reference file the depositor may read\n');
  payloadCase(
    'hardlink-outside',
    (p) => linkSync(shared, join(p, 'linked.bin')),
    sha256Line('linked.bin', 'a reference file the depositor may read\n'),
    'imported',
  );

  // A manifest over the default cap (128 MiB) and one of many lines under it.
  const hugeManifest = 'DS-manifest-over-cap';
  fixture.dataset(hugeManifest, { submission: HOSTILE_SUBMISSION, files: files(hugeManifest) });
  writeLongManifest(
    join(fixture.datasetDir(hugeManifest), 'manifest-sha256.txt'),
    options.hugeManifestLines,
  );
  const longManifest = 'DS-manifest-long-under-cap';
  fixture.dataset(longManifest, { submission: HOSTILE_SUBMISSION, files: files(longManifest) });
  writeLongManifest(
    join(fixture.datasetDir(longManifest), 'manifest-sha256.txt'),
    options.longManifestLines,
  );
  ids.push(hugeManifest, longManifest);

  // Good now, spoiled once their imports wait in the queue (the worker must re-check everything).
  const lateTargets: { id: string; spoil(): void }[] = [];
  const late = (name: string, spoilIt: (dir: string) => void) => {
    const id = `DS-late-${name}`;
    fixture.dataset(id, {
      submission: HOSTILE_SUBMISSION,
      files: { 'data.txt': 'x', 'sub/deep.txt': 'y' },
    });
    lateTargets.push({ id, spoil: () => spoilIt(fixture.datasetDir(id)) });
    ids.push(id);
  };
  late('dataset-json-link', (d) => spoil(join(d, 'dataset.json'), 'link-outside', '', 'file'));
  late('manifest-fifo', (d) => spoil(join(d, 'manifest-sha256.txt'), 'fifo', '', 'file'));
  late('marker-socket', (d) => spoil(join(d, '.ready'), 'socket', '', 'file'));
  late('dir-link-victim', (d) => spoil(d, 'link-victim', victimDir, 'directory'));
  late('payload-link-victim', (d) =>
    spoil(join(d, 'payload'), 'link-victim', join(victimDir, 'payload'), 'directory'),
  );
  late('subdir-link-victim', (d) =>
    spoil(join(d, 'payload/sub'), 'link-victim', join(victimDir, 'payload'), 'directory'),
  );
  late('payload-fifo', (d) => spoil(join(d, 'payload/data.txt'), 'fifo', '', 'file'));

  // Dataset ids and submission names no path should have: never listed, never crash.
  const unsafeIds = [
    '../DS-VICTIM',
    'a/b',
    '',
    '.',
    '..',
    'x'.repeat(200),
    'tab\tid',
    'nul\u0000id',
    '\udc80',
  ];
  fixture.submission(HOSTILE_SUBMISSION, {
    project: HOSTILE_PROJECT,
    datasets: [...ids, ...unsafeIds, VICTIM_DATASET],
  });
  for (const name of ['bell\u0007ref', '...', ' ', 'x'.repeat(250)])
    fixture.submission(name, { project: 'P', datasets: [] });
  const badName = Buffer.concat([Buffer.from(`${root}/submissions/latin1-`), Buffer.from([0xe9])]);
  mkdirSync(badName);
  writeFileSync(Buffer.concat([badName, Buffer.from('/submission.json')]), '{"ref":"x"}');
  // A submission.json that is not UTF-8, one that is not JSON, one over the cap.
  mkdirSync(join(root, 'submissions/SUB-BADJSON'), { recursive: true });
  writeFileSync(
    join(root, 'submissions/SUB-BADJSON/submission.json'),
    Buffer.from([0x7b, 0xff, 0x7d]),
  );
  fixture.submission('SUB-HUGE', { project: 'P', datasets: [] });
  writeFileSync(
    join(root, 'submissions/SUB-HUGE/submission.json'),
    JSON.stringify({ ref: 'SUB-HUGE', pad: 'x'.repeat(METADATA_MAX_BYTES) }),
  );

  // Issue 30, item 5: a 0.9 MB submission.json naming 80,000 datasets (over the 10,000 of
  // SOURCE_SUBMISSION_MAX_DATASETS), and one naming 2,500 that were never delivered (paged).
  const named = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
  fixture.submission(MANY_DATASETS_SUBMISSION, { project: 'P', datasets: named('DS', 80_000) });
  fixture.submission(AT_CAP_SUBMISSION, { project: 'P', datasets: named('DS-2500', 2500) });

  const unsafeProjects: { ref: string; dataset: string }[] = [];
  for (const [i, project] of [
    '..',
    '../../outside',
    'a/b',
    '',
    '.',
    'x\ny',
    'p'.repeat(300),
  ].entries()) {
    const ref = `SUB-UNSAFE-${i}`;
    const dataset = `DS-UNSAFE-${i}`;
    fixture.submission(ref, { project, datasets: [dataset] });
    fixture.dataset(dataset, { submission: ref, files: files(dataset) });
    unsafeProjects.push({ ref, dataset });
  }
  return {
    root,
    secretFile,
    spoiled,
    payloads,
    unsafeProjects,
    hugeManifest,
    longManifest,
    lateTargets,
  };
}

/** How many entries a depositor's hostile tree holds (issue 30: 150,000). */
export const MANY_ENTRIES = 150_000;
/** The spread variants: past the 1,000 problems kept, over many directories (walk parts). */
const SPREAD_ENTRIES = 20_000;
/** Files with wrong digests: past the 1,000 problems kept, cheap to copy. */
export const WRONG_DIGESTS = 5000;

/** `count` of something, made in one directory or spread over `spread` subdirectories. */
function many(payload: string, count: number, spread: number, make: (path: string) => void): void {
  for (let d = 0; d < spread; d++) mkdirSync(join(payload, `d${d}`), { recursive: true });
  for (let i = 0; i < count; i++)
    make(spread > 0 ? join(payload, `d${i % spread}`, `e${i}`) : join(payload, `e${i}`));
}

/**
 * Work whose size a depositor chooses (issue 30, items 1-4), each in variants: 150,000 links
 * in one directory and 20,000 over 200, 150,000 empty directories flat and 20,000 in a tree, thousands of
 * bad names of two kinds, a payload nested past PATH_MAX, 5,000 wrong digests, names holding
 * line and paragraph separators, a deeply nested dataset.json. Everything is rejected with at
 * most 1,000 problems and the count, or imports; nothing fails or is retried.
 */
function roundThree(
  payloadCase: (
    name: string,
    make: (payload: string) => void,
    manifest: string | Buffer,
    expected: PayloadCase['expected'],
  ) => void,
  fixture: DropzoneFixture,
  withOk: (payload: string) => void,
  ok: string,
): void {
  const rejectedMany = (codes: string[]) => [...codes, 'more_problems'].sort();
  payloadCase(
    'links-150k-flat',
    (p) => (withOk(p), many(p, MANY_ENTRIES, 0, (path) => symlinkSync('ok.txt', path))),
    ok,
    rejectedMany(['symlink']),
  );
  payloadCase(
    'links-20k-spread',
    (p) => (withOk(p), many(p, SPREAD_ENTRIES, 200, (path) => symlinkSync('/etc/passwd', path))),
    ok,
    rejectedMany(['symlink']),
  );
  payloadCase(
    'dirs-150k-flat',
    (p) => (withOk(p), many(p, MANY_ENTRIES, 0, mkdirSync)),
    ok,
    'imported',
  );
  payloadCase(
    'dirs-20k-tree',
    (p) => (withOk(p), many(p, SPREAD_ENTRIES, 200, mkdirSync)),
    ok,
    'imported',
  );
  // One kind each: which 1,000 of two kinds are kept depends on the order of the directory.
  payloadCase(
    'control-names-2k',
    (p) => {
      withOk(p);
      for (let i = 0; i < 2000; i++) writeFileSync(join(p, `bell-${i}\u0007`), 'x');
    },
    ok,
    rejectedMany(['control_character']),
  );
  payloadCase(
    'latin1-names-2k',
    (p) => {
      withOk(p);
      for (let i = 0; i < 2000; i++)
        writeFileSync(Buffer.concat([Buffer.from(`${p}/latin1-${i}-`), Buffer.from([0xe9])]), 'x');
    },
    ok,
    rejectedMany(['invalid_utf8']),
  );
  payloadCase(
    'deeper-than-path-max',
    (p) => {
      withOk(p);
      // One relative step at a time: no absolute path that deep can be named.
      const step = `mkdir ${'n'.repeat(250)} && cd ${'n'.repeat(250)}`;
      execFileSync('bash', ['-c', `${Array(20).fill(step).join(' && ')} && echo x > f`], {
        cwd: p,
      });
    },
    ok,
    ['name_too_long'],
  );
  let wrong = ok;
  payloadCase(
    'wrong-digests-5k',
    (p) => {
      withOk(p);
      mkdirSync(join(p, 'w'));
      for (let i = 0; i < WRONG_DIGESTS; i++) writeFileSync(join(p, `w/${i}`), `${i}`);
    },
    (() => {
      for (let i = 0; i < WRONG_DIGESTS; i++) wrong += sha256Line(`w/${i}`, `not ${i}`);
      return wrong;
    })(),
    rejectedMany(['checksum_mismatch']),
  );
  const separated = [
    'line\u2028sep.txt',
    'para\u2029sep.txt',
    '\u2028\u2029',
    'nb\u00a0sp',
    'zw\u200bj',
  ];
  payloadCase(
    'line-separators',
    (p) => {
      withOk(p);
      for (const name of separated) writeFileSync(join(p, name), name);
    },
    ok + separated.map((name) => sha256Line(name, name)).join(''),
    'imported',
  );
  // A C1 control (NEL) is refused in a name on disk and in a manifest alike, and named.
  payloadCase(
    'next-line-control',
    (p) => (withOk(p), writeFileSync(join(p, 'nel\u0085x'), 'x')),
    ok + sha256Line('nel\u0085x', 'x'),
    ['control_character', 'manifest_control_character'],
  );
  for (const depth of [65, 5000, 200_000]) {
    const id = `DS-payload-deep-json-${depth}`;
    payloadCase(`deep-json-${depth}`, withOk, ok, { notReady: 'metadata_invalid' });
    writeFileSync(
      join(fixture.datasetDir(id), 'dataset.json'),
      `{"dataset_id":"${id}","submission":"${HOSTILE_SUBMISSION}","metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    );
  }
}
