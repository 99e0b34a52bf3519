import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  bodySize,
  decrypt,
  encrypt,
  generateKeyPair,
  headerAt,
  headerPackets,
  openHeader,
  publicKeyFile,
  secretKey,
  secretKeyFile,
} from '@app/crypt4gh';
import { digest, DropzoneFixture, tempDir } from '../../test/support/dropzone-fixture';
import { referenceDecrypt } from '../../../../test/support/crypt4gh-reference';
import { PROCESS_START_MS, REAL_IO_MS } from '../../../../test/support/timeouts';
import { DEFAULT_SOURCE_LIMITS } from '../config/source-config';
import { runDatasetImport } from '../import-pipeline/dataset-import-pipeline';
import type { DatasetImportContext } from '../import-pipeline/dataset-import-context';
import { CopyThreadPool } from '../import-pipeline/copying';
import { closeSourceScanner, sourceScanner } from '../sources/source-system';
import { DropzoneSource } from '../sources/dropzone/dropzone.source';
import {
  archiveStorage,
  BODY_CHECKSUMS_DIR,
  bodyChecksumPath,
  HEADERS_DIR,
  headerPath,
} from './archive-storage';
import { FilesystemStorage } from './filesystem/filesystem-storage';
import { FilesystemStagingArea } from './filesystem/filesystem-staging-area';
import * as fileTree from './filesystem/file-tree';
import { EncryptedLocalObjects } from './archive-local-object';
import { parseProvenance } from './provenance';
import { JOURNAL_PATH } from './staged-files-journal';
import { checkRotation } from '../../test/support/archive-rotation';
import { cachedBytes } from '../../test/support/page-cache';
import { entryCommand } from '../../../../test/support/app-process';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// Real threads and files, and the reference CLI in Python: seconds on a loaded 2-core machine.
jest.setTimeout(REAL_IO_MS);

const pool = new CopyThreadPool(2);
const archive = generateKeyPair();
const depositor = generateKeyPair();

/** Our reader's plain-text of a stored body with its header (the archive key). */
async function plaintextOf(body: Buffer, header: Buffer): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of decrypt([body], [archive.secretKey], { header })) parts.push(part);
  return Buffer.concat(parts);
}

async function encrypted(plain: Buffer, readers: Buffer[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of encrypt([plain], readers)) parts.push(part);
  return Buffer.concat(parts);
}

/** Sizes around the 64 KiB segment, several segments, a file read in more than one chunk. */
const FILES: Record<string, Buffer> = {
  'empty.dat': Buffer.alloc(0),
  'a.txt': Buffer.from('alpha\n'),
  'segment.bin': randomBytes(65_536),
  'nested/deep/three-and-a-bit.bin': randomBytes(3 * 65_536 + 17),
  'big/two-mib.bin': randomBytes(2 * 1024 * 1024 + 5),
};

function walk(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((entry) => statSync(join(root, entry)).isFile())
    .map((entry) => relative(root, join(root, entry)));
}

/**
 * Checks that a stored dataset holds exactly `paths` (bodies), their headers and its two lists,
 * and returns the lists.
 */
function storedLists(dataset: string, stored: string[], paths: string[]) {
  expect(stored).toEqual(
    [
      ...paths,
      ...paths.map(headerPath),
      ...paths.map(bodyChecksumPath),
      '.provisioner/manifest-sha256.txt',
      '.provisioner/provenance.json',
    ].sort(),
  );
  return {
    provenance: parseProvenance(readFileSync(join(dataset, '.provisioner/provenance.json')))!,
    manifest: readFileSync(join(dataset, '.provisioner/manifest-sha256.txt'), 'utf8'),
  };
}

describe('archive mode on filesystem storage (STORAGE_ENCRYPTION=crypt4gh)', () => {
  let base: string;
  let storage: FilesystemStorage;
  let source: DropzoneSource;
  let secretKeyPath: string;

  beforeAll(async () => {
    await Promise.all([sourceScanner().start(), pool.start()]);
    base = tempDir('archive-storage');
    secretKeyPath = join(base, 'archive.sec');
    writeFileSync(secretKeyPath, await secretKeyFile(archive.secretKey, { passphrase: 'pw' }));
  }, 30_000);

  afterAll(async () => {
    await pool.close();
    await closeSourceScanner();
  });

  let dropzone: DropzoneFixture;

  beforeEach(() => {
    const dir = tempDir('archive-import');
    dropzone = new DropzoneFixture(join(dir, 'dropzone'));
    dropzone.submission('SUB-1', { project: 'PRJ1', datasets: ['DS1'] });
    dropzone.dataset('DS1', { submission: 'SUB-1', files: FILES });
    storage = new FilesystemStorage(join(dir, 'storage'));
    source = new DropzoneSource({
      name: 'dropzone',
      type: 'dropzone',
      root: dropzone.root,
      importable_statuses: ['completed'],
    });
  });

  function context(
    overrides: Partial<DatasetImportContext>,
    datasetId = 'DS1',
  ): DatasetImportContext {
    return {
      importId: `dropzone-dataset-${datasetId}`,
      attempt: 1,
      queuedAt: null,
      source,
      storage: archiveStorage(storage, {
        ...archive,
        publicKeyFile: publicKeyFile(archive.publicKey),
      }),
      datasetId,
      versions: { provisioner: 'test' },
      reportProgress: () => Promise.resolve(),
      bufferBytes: 64 * 1024,
      sourceLimits: DEFAULT_SOURCE_LIMITS,
      ...overrides,
    };
  }

  /**
   * Imports `datasetId` (fresh files recorded too) and stops it once `files` are copied: its
   * staging area and the paths its journal recorded.
   */
  async function stoppedAfter(
    files: number,
    overrides: Partial<DatasetImportContext>,
    datasetId: string,
  ): Promise<{ staged: string; recorded: string[] }> {
    const stop = new AbortController();
    let copied = 0;
    const stopped = await runDatasetImport(
      context(
        {
          ...overrides,
          signal: stop.signal,
          recentChangeMs: 0,
          copyMeter: {
            addBytes: () => undefined,
            addFiles: (n) => {
              copied += n;
              if (copied >= files) stop.abort();
            },
          },
        },
        datasetId,
      ),
    ).catch((e: unknown) => e);
    expect(stopped).toMatchObject({ name: 'ImportStoppedError' });
    const [area] = await storage.listStaging();
    const staged = storage.absolute(`.staging/${area}`);
    const recorded = readFileSync(join(staged, JOURNAL_PATH), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { path: string }).path);
    return { staged, recorded };
  }

  /** The reference CLI's plain-text of a stored file: its header, then its body, decrypted. */
  const theirDecrypt = (dataset: string, path: string): Promise<Buffer> =>
    referenceDecrypt(
      [readFileSync(join(dataset, headerPath(path))), readFileSync(join(dataset, path))],
      secretKeyPath,
      base,
      'pw',
    );

  it.each([
    ['on the copy threads (every file encrypted and written there)', { copyPool: pool }, 0],
    ['on the main thread lanes', { copyPool: undefined }, 3 * Object.keys(FILES).length],
  ])(
    'stores only Crypt4GH bodies, headers apart, plain-text checksums in the provenance: %s',
    async (_how, overrides, createdHere) => {
      const created = jest.spyOn(FilesystemStagingArea.prototype, 'createObject');
      let calls: (typeof created.mock.calls)[number][] = [];
      const result = await runDatasetImport(context(overrides)).finally(() => {
        // Restoring clears the calls.
        calls = [...created.mock.calls];
        created.mockRestore();
      });
      // The threads create each file's three objects themselves: none through this thread's
      // createObject (nine file operations a file through libuv's pool, issue 57 item 6).
      const dataObjects = calls.filter(
        ([path]) =>
          Object.keys(FILES).includes(path) ||
          [HEADERS_DIR, BODY_CHECKSUMS_DIR].some((dir) => path.startsWith(`${dir}/`)),
      );
      expect(dataObjects).toHaveLength(createdHere);
      const dataset = storage.absolute(result.path);
      const stored = walk(dataset).sort();
      const { provenance, manifest } = storedLists(dataset, stored, Object.keys(FILES));
      for (const [path, plain] of Object.entries(FILES)) {
        const body = readFileSync(join(dataset, path));
        // A body, never the plain-text: its size is the segments', and no 16 plain bytes show.
        expect(body.length).toBe(bodySize(plain.length));
        // The stored body's own SHA-256, for fixity checks without the key.
        expect(readFileSync(join(dataset, bodyChecksumPath(path)), 'utf8')).toBe(
          `${digest('sha256', body)}\n`,
        );
        if (plain.length >= 16) expect(body.includes(plain.subarray(0, 16))).toBe(false);
        expect(provenance.files.find((file) => file.path === path)).toEqual({
          path,
          size: plain.length,
          sha256: digest('sha256', plain),
        });
        expect(manifest).toContain(`${digest('sha256', plain)}  ${path}`);
        expect((await theirDecrypt(dataset, path)).equals(plain)).toBe(true);
      }
      // One writer key pair for the import (one X25519 exchange), a data key of its own per file.
      const headers = await Promise.all(
        Object.keys(FILES).map(async (path) =>
          headerPackets(readFileSync(join(dataset, headerPath(path)))),
        ),
      );
      const writerKeys = headers.map(([packet]) => packet.subarray(8, 40).toString('hex'));
      expect(new Set(writerKeys).size).toBe(1);
      const dataKeys = headers.map(
        (packets) => openHeader(packets, [secretKey(archive.secretKey)]).dataKeys[0],
      );
      expect(new Set(dataKeys.map((key) => key.toString('hex'))).size).toBe(dataKeys.length);
      expect(provenance.encryption).toEqual({
        format: 'crypt4gh',
        headers: '.provisioner/c4gh-headers',
        body_sha256: '.provisioner/c4gh-body-sha256',
        recipient: archive.publicKey.toString('base64'),
      });
      expect(provenance.totals.bytes).toBe(
        Object.values(FILES).reduce((sum, plain) => sum + plain.length, 0),
      );
    },
  );

  it.each([
    ['on the copy threads', { copyPool: pool }],
    ['on the main thread lanes', { copyPool: undefined }],
  ])(
    'takes a deposit encrypted for the archive key (*.c4gh): header re-wrapped, body byte for byte, listed by its plain-text: %s',
    async (_how, overrides) => {
      // Small and large: the copy threads read the small one, the lanes stream the large one.
      const small = Buffer.from('a small deposited note\n');
      const large = randomBytes(2 * 1024 * 1024 + 333);
      const readme = Buffer.from('a plain file beside the deposits, encrypted on its way in\n');
      const deposits = {
        'note.txt.c4gh': await encrypted(small, [depositor.publicKey, archive.publicKey]),
        'reads/reads.bam.c4gh': await encrypted(large, [archive.publicKey]),
        // On the copy threads the plain files are encrypted there, the deposits re-wrapped here.
        'README.txt': readme,
      };
      dropzone.submission('SUB-1', { project: 'PRJ1', datasets: ['DS1', 'DS2'] });
      dropzone.dataset('DS2', {
        submission: 'SUB-1',
        files: deposits,
        manifests: ['sha256', 'md5'],
      });
      const record = jest.spyOn(FilesystemStagingArea.prototype, 'record');
      let recorded: string[] = [];
      // Fresh files recorded too (recentChangeMs 0): the deposits are the ones left out.
      const result = await runDatasetImport(
        context({ ...overrides, recentChangeMs: 0 }, 'DS2'),
      ).finally(() => {
        // Restoring clears the calls.
        recorded = record.mock.calls.flatMap(([files]) => files.map((file) => file.path));
        record.mockRestore();
      });
      // Once every file is copied nothing more is recorded (docs/decisions/small-files-finish.md);
      // that a deposit never is, even by a stopped copy, is the next test's.
      expect(recorded).toEqual([]);
      const dataset = storage.absolute(result.path);
      const { provenance, manifest } = storedLists(dataset, walk(dataset).sort(), [
        'README.txt',
        'note.txt',
        'reads/reads.bam',
      ]);
      expect(readFileSync(join(dataset, 'README.txt')).length).toBe(bodySize(readme.length));
      expect((await theirDecrypt(dataset, 'README.txt')).equals(readme)).toBe(true);
      for (const [path, plain, deposited] of [
        ['note.txt', small, deposits['note.txt.c4gh']],
        ['reads/reads.bam', large, deposits['reads/reads.bam.c4gh']],
      ] as const) {
        // The body as deposited: never decrypted to be stored.
        const { length } = (await headerAt(deposited))!;
        expect(readFileSync(join(dataset, path)).equals(deposited.subarray(length))).toBe(true);
        expect(readFileSync(join(dataset, bodyChecksumPath(path)), 'utf8')).toBe(
          `${digest('sha256', deposited.subarray(length))}\n`,
        );
        // A header for the archive key alone: the depositor's packets are gone.
        const header = readFileSync(join(dataset, headerPath(path)));
        const packets = await headerPackets(header);
        expect(() => openHeader(packets, [secretKey(depositor.secretKey)])).toThrow(
          expect.objectContaining({ fault: 'no-key' }),
        );
        expect(provenance.files.find((file) => file.path === path)).toEqual({
          path,
          size: plain.length,
          sha256: digest('sha256', plain),
          md5: digest('md5', plain),
        });
        expect(manifest).toContain(`${digest('sha256', plain)}  ${path}\n`);
        expect((await theirDecrypt(dataset, path)).equals(plain)).toBe(true);
      }
      expect(manifest).not.toContain('.c4gh');
      expect(provenance.totals.bytes).toBe(small.length + large.length + readme.length);
    },
  );

  it.each([
    ['on the copy threads', { copyPool: pool }],
    ['on the main thread lanes', { copyPool: undefined }],
  ])(
    'a stopped copy records the plain files it copied and never a deposit (stored under another name, no later attempt could keep it): %s',
    async (_how, overrides) => {
      // The deposits are the largest, so they are taken first; twelve plain files after them.
      const deposits = Object.fromEntries(
        await Promise.all(
          Array.from({ length: 4 }, async (_, i) => [
            `dep-${i}.bin.c4gh`,
            await encrypted(randomBytes(2_097_152 + i), [archive.publicKey]),
          ]),
        ),
      ) as Record<string, Buffer>;
      const plain = Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`plain-${i}.bin`, randomBytes(1_572_864 + i)]),
      );
      dropzone.submission('SUB-1', { project: 'PRJ1', datasets: ['DS1', 'DS5'] });
      dropzone.dataset('DS5', { submission: 'SUB-1', files: { ...deposits, ...plain } });
      const { recorded } = await stoppedAfter(5, overrides, 'DS5');
      // More files copied than there are deposits (taken first): plain files recorded, no deposit.
      expect(recorded.length).toBeGreaterThan(0);
      for (const path of recorded) expect(Object.keys(plain)).toContain(path);
    },
  );

  it.each([
    ['on the copy threads', { copyPool: pool }],
    ['on the main thread lanes', { copyPool: undefined }],
  ])(
    'a stopped attempt leaves only cipher-text, each recorded body with its header and checksum; the next keeps them and every published file decrypts: %s',
    async (_how, overrides) => {
      // Ten files of 1.5 MiB (on the threads each a batch of its own) and a small one.
      const files: Record<string, Buffer> = Object.fromEntries([
        ...Array.from({ length: 10 }, (_, i) => [`data/f-${i}.bin`, randomBytes(1_572_864 + i)]),
        ['small.txt', randomBytes(3000)],
      ]);
      dropzone.submission('SUB-1', { project: 'PRJ1', datasets: ['DS1', 'DS4'] });
      dropzone.dataset('DS4', { submission: 'SUB-1', files });
      const { staged, recorded } = await stoppedAfter(3, overrides, 'DS4');
      expect(recorded.length).toBeGreaterThanOrEqual(3);
      expect(recorded.length).toBeLessThan(Object.keys(files).length);
      // Not a plain byte in the area, whatever the stop interrupted.
      for (const path of walk(staged)) {
        const content = readFileSync(join(staged, path));
        for (const plain of Object.values(files))
          expect(content.includes(plain.subarray(0, 32))).toBe(false);
      }
      for (const path of recorded) {
        const body = readFileSync(join(staged, path));
        expect(readFileSync(join(staged, bodyChecksumPath(path)), 'utf8')).toBe(
          `${digest('sha256', body)}\n`,
        );
        const header = readFileSync(join(staged, headerPath(path)));
        expect((await plaintextOf(body, header)).equals(files[path])).toBe(true);
      }

      const resumed = await runDatasetImport(
        context({ ...overrides, attempt: 2, recentChangeMs: 0 }, 'DS4'),
      );
      const dataset = storage.absolute(resumed.path);
      const { provenance } = storedLists(dataset, walk(dataset).sort(), Object.keys(files));
      expect(provenance.import).toMatchObject({
        attempt: 2,
        kept_from_earlier_attempts: { files: recorded.length },
      });
      for (const [path, plain] of Object.entries(files)) {
        const body = readFileSync(join(dataset, path));
        const header = readFileSync(join(dataset, headerPath(path)));
        expect((await plaintextOf(body, header)).equals(plain)).toBe(true);
      }
      // The reference CLI too: a body the first attempt wrote, one the second did.
      const later = Object.keys(files).find((path) => !recorded.includes(path))!;
      for (const path of [recorded[0], later])
        expect((await theirDecrypt(dataset, path)).equals(files[path])).toBe(true);
    },
  );

  it('without syncfs, a record fsyncs every object of each file: header, body and body checksum, whichever way they were written', async () => {
    const area = await context({}).storage.openStaging('no-syncfs');
    const plain = { lanes: Buffer.from('alpha\n'), threads: randomBytes(70_000) };
    // The main thread's way (createObject)...
    const writer = await area.createObject('lanes/a.txt', plain.lanes.length);
    await writer.write(plain.lanes);
    await writer.commit();
    // ...and a copy thread's (encryptedLocalFiles), the same calls run here.
    const local = area.encryptedLocalFiles!;
    const threaded = new EncryptedLocalObjects(local.headerKeys, area.id).open(
      local.prepare('threads/b.bin'),
    );
    threaded.write(plain.threads);
    threaded.commit();
    const source = { ino: 1, size: 0, mtimeMs: 0, ctimeMs: 0 };
    const records = Object.entries({
      'lanes/a.txt': plain.lanes,
      'threads/b.bin': plain.threads,
    }).map(([path, bytes]) => ({
      path,
      size: bytes.length,
      sha256: digest('sha256', bytes),
      md5: null,
      source: { ...source, size: bytes.length },
    }));
    // `sync -f` missing or failing: what syncFilesystem answers then.
    const syncfs = jest.spyOn(fileTree, 'syncFilesystem').mockResolvedValue(false);
    const fsync = jest.spyOn(fileTree, 'fsyncPath');
    let fsynced: string[] = [];
    try {
      await area.record(records);
    } finally {
      // Restoring clears the calls.
      fsynced = fsync.mock.calls.map(([path]) => path);
      fsync.mockRestore();
      syncfs.mockRestore();
    }
    const staged = storage.absolute('.staging/no-syncfs');
    const written = walk(staged).filter((path) => path !== JOURNAL_PATH);
    expect(written.sort()).toEqual(
      ['lanes/a.txt', 'threads/b.bin']
        .flatMap((path) => [path, headerPath(path), bodyChecksumPath(path)])
        .sort(),
    );
    for (const path of written) expect(fsynced).toContain(join(staged, path));
  });

  it('with direct writes (IMPORT_DIRECT_WRITES), a large body leaves the copy threads past the page cache, in whole blocks, and decrypts to the file', async () => {
    // Larger than the gathering buffer, and no whole number of segments or blocks.
    const big = randomBytes(9 * 1024 * 1024 + 77);
    const files = { 'big/nine-mib.bin': big, 'small.txt': Buffer.from('small\n') };
    dropzone.submission('SUB-2', { project: 'PRJ1', datasets: ['DS2'] });
    dropzone.dataset('DS2', { submission: 'SUB-2', files });
    storage = new FilesystemStorage(join(base, 'direct-storage'), {
      directWriteMinBytes: 1024 * 1024,
    });
    const result = await runDatasetImport(context({ copyPool: pool }, 'DS2'));
    const dataset = storage.absolute(result.path);
    const body = join(dataset, 'big/nine-mib.bin');
    expect(cachedBytes(body)).toBe(0);
    // The small file's body went through the page cache, as a plain small file does.
    expect(cachedBytes(join(dataset, 'small.txt'))).toBeGreaterThan(0);
    const stored = readFileSync(body);
    expect(stored.length).toBe(bodySize(big.length));
    expect(readFileSync(join(dataset, bodyChecksumPath('big/nine-mib.bin')), 'utf8')).toBe(
      `${digest('sha256', stored)}\n`,
    );
    const header = readFileSync(join(dataset, headerPath('big/nine-mib.bin')));
    expect((await plaintextOf(stored, header)).equals(big)).toBe(true);
    expect((await theirDecrypt(dataset, 'big/nine-mib.bin')).equals(big)).toBe(true);
  });

  it('rotate-archive-key re-wraps every header of a read-only published tree, no body byte rewritten, resuming after a crash', async () => {
    // Headers the copy threads wrote.
    const result = await runDatasetImport(context({ copyPool: pool }));
    const headers = join(storage.absolute(result.path), '.provisioner/c4gh-headers/nested/deep');
    const readOnly = () => statSync(headers).mode & 0o222;
    expect(readOnly()).toBe(0);
    await checkRotation(storage, result.path, FILES, archive, base);
    // Locked again after each header was replaced.
    expect(readOnly()).toBe(0);
  });

  it(
    'npm run provisioner -- rotate-archive-key: the settings name the keys; a second run finds nothing left',
    async () => {
      const result = await runDatasetImport(context({}));
      const next = generateKeyPair();
      const nextPath = join(base, 'next.sec');
      writeFileSync(nextPath, await secretKeyFile(next.secretKey));
      const env = {
        ...process.env,
        REDIS_URL: 'redis://127.0.0.1:1',
        STORAGE_ROOT: storage.absolute(''),
        STORAGE_ENCRYPTION: 'crypt4gh',
        C4GH_ARCHIVE_SECRET_KEY_FILE: nextPath,
        C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE: secretKeyPath,
        C4GH_ARCHIVE_PREVIOUS_PASSPHRASE_FILE: join(base, 'pw'),
      };
      writeFileSync(join(base, 'pw'), 'pw\n');
      const run = async (args: string[], runEnv: NodeJS.ProcessEnv = env) => {
        const { args: entry } = entryCommand('provisioner', 'src/provisioner.cli');
        return promisify(execFile)(process.execPath, [...entry, 'rotate-archive-key', ...args], {
          env: runEnv,
        }).then(
          ({ stdout }) => ({ code: 0, stdout }),
          (error: { code: number; stdout: string; stderr: string }) => ({
            code: error.code,
            stdout: `${error.stdout}${error.stderr}`,
          }),
        );
      };
      const count = Object.keys(FILES).length;
      const first = await run(['--json']);
      expect(first.stdout).toContain(`${count} re-wrapped, 0 already, 0 failed ${result.path}`);
      expect(JSON.parse(first.stdout.trim().split('\n').pop()!)).toEqual({
        'rotate-archive-key': { datasets: 1, rewrapped: count, already: 0, failed: 0 },
      });
      expect(first.code).toBe(0);
      const second = await run(['--json']);
      expect(JSON.parse(second.stdout.trim().split('\n').pop()!)).toEqual({
        'rotate-archive-key': { datasets: 1, rewrapped: 0, already: count, failed: 0 },
      });
      const header = readFileSync(join(storage.absolute(result.path), headerPath('a.txt')));
      expect(
        openHeader(await headerPackets(header), [secretKey(next.secretKey)]).dataKeys,
      ).toHaveLength(1);
      // Without the previous key there is nothing to rotate from: 2, saying what to set.
      const without: NodeJS.ProcessEnv = { ...env };
      delete without.C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE;
      delete without.C4GH_ARCHIVE_PREVIOUS_PASSPHRASE_FILE;
      const refused = await run([], without);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toContain('C4GH_ARCHIVE_PREVIOUS_SECRET_KEY_FILE');
      // Three processes of the command.
    },
    3 * PROCESS_START_MS + REAL_IO_MS,
  );

  it.each([
    [
      'not for the archive key',
      async () => ({ 'x.bin.c4gh': await encrypted(Buffer.from('secret'), [depositor.publicKey]) }),
      'c4gh_deposit_refused',
    ],
    [
      'not Crypt4GH at all',
      () => Promise.resolve({ 'x.bin.c4gh': Buffer.from('plain text in disguise') }),
      'c4gh_deposit_refused',
    ],
    [
      'named as another file of the dataset is stored',
      async () => ({
        'x.bin': 'plain',
        'x.bin.c4gh': await encrypted(Buffer.from('x'), [archive.publicKey]),
      }),
      'c4gh_deposit_name_taken',
    ],
  ])('rejects a deposit %s, naming it, leaving nothing behind', async (_what, files, code) => {
    dropzone.submission('SUB-1', { project: 'PRJ1', datasets: ['DS1', 'DS3'] });
    dropzone.dataset('DS3', { submission: 'SUB-1', files: await files() });
    // On the lanes after every check; on the copy threads while preflight walks.
    for (const copyPool of [undefined, pool]) {
      const error = (await runDatasetImport(context({ copyPool }, 'DS3')).catch(
        (e: unknown) => e,
      )) as { name: string; code: string; details: { code: string; path?: string }[] };
      expect(error).toMatchObject({ name: 'ImportRejectedError', code });
      expect(error.details).toEqual([expect.objectContaining({ code, path: 'x.bin.c4gh' })]);
      expect(await storage.listStaging()).toEqual([]);
      expect(await storage.exists('projects/PRJ1/SUB-1/data/raw/DS3')).toBe(false);
      // Names are checked with the manifests, before the submission's collection is made.
      if (code === 'c4gh_deposit_name_taken')
        expect(await storage.exists('projects/PRJ1')).toBe(false);
    }
  });
});
