import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { createS3Client, signedPutOf } from '../src/common/s3/s3-client';
import { PartBufferPool } from '../src/storage/s3/part-buffer-pool';
import { S3ObjectWriter, S3VerificationError } from '../src/storage/s3/s3-object-writer';
import { S3Storage } from '../src/storage/s3/s3-storage';
import { datasetCommitObject } from '../src/storage/storage-layout';
import {
  StagingLostError,
  StorageRefusedError,
  TargetExistsError,
} from '../src/storage/storage-system';
import {
  createTestBucket,
  listKeys,
  openUploads,
  removeTestBucket,
  s3TestServer,
  S3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const TARGET = 'projects/PRJ1/SUB-1/data/raw/DS-1';
const RAW = 'projects/PRJ1/SUB-1/data/raw';

// Starting Swift from its installed packages takes ~5 s; installing them first ~40 s more.
jest.setTimeout(240_000);

/** The S3 backend against a real S3 server: Debian's Swift with s3api (no fake). */
describe('S3 storage on Swift (s3api)', () => {
  let server: S3TestServer;
  let client: S3Client;
  let bucket: string;
  let storage: S3Storage;
  const md5 = (b: Buffer) => createHash('md5').update(b).digest('base64');
  const get = async (key: string) =>
    Buffer.from(
      await (
        await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      ).Body!.transformToByteArray(),
    );

  beforeAll(async () => {
    server = await s3TestServer();
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'storage');
    storage = new S3Storage(client, {
      bucket,
      prefix: 'tenant/',
      partBytes: PART,
      uploadConcurrency: 3,
    });
  });
  afterAll(async () => {
    if (bucket) await removeTestBucket(client, bucket);
    client?.destroy();
  });
  jest.setTimeout(60_000);

  it('reads an object whole or a range of it: fewer bytes at its end, none past it (416), null when absent', async () => {
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'tenant/ranges/object.txt', Body: '0123456789' }),
    );
    const range = (start: number, length: number) =>
      storage.readObject('ranges/object.txt', { start, length }).then((b) => b?.toString());
    expect((await storage.readObject('ranges/object.txt'))!.toString()).toBe('0123456789');
    expect(await range(0, 4)).toBe('0123');
    expect(await range(8, 4)).toBe('89');
    expect(await range(10, 4)).toBe('');
    expect(await range(20, 4)).toBe('');
    expect(await storage.readObject('ranges/absent.txt', { start: 0, length: 4 })).toBeNull();
  });

  it('the server itself: conditional PUT answers 501, a wrong Content-MD5 is refused (BadDigest)', async () => {
    const put = (extra: object) =>
      client.send(new PutObjectCommand({ Bucket: bucket, Key: 'probe', Body: 'x', ...extra }));
    await expect(
      client.send(
        new PutObjectCommand({ Bucket: bucket, Key: 'probe-cond', Body: 'x', IfNoneMatch: '*' }),
      ),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 501 } });
    await expect(put({ ContentMD5: md5(Buffer.from('y')) })).rejects.toMatchObject({
      name: 'BadDigest',
    });
    await expect(storage.exists('probe')).resolves.toBe(false);
  });

  it('stages at the final keys, hides the dataset until its commit object, then publishes once', async () => {
    const big = randomBytes(2 * PART + 12345);
    const area = await storage.openStaging('imp-1~data~a1', TARGET);
    const writer = await area.createObject('reads/big.bin', big.length);
    for (let i = 0; i < big.length; i += 1_000_000)
      await writer.write(big.subarray(i, i + 1_000_000));
    await writer.commit();
    const small = await area.createObject('README.txt', 6);
    await small.write(Buffer.from('hello\n'));
    await small.commit();
    const empty = await area.createObject('empty.dat', 0);
    await empty.commit();
    await area.writeSmallObject('.provisioner/manifest-sha256.txt', 'manifest\n');
    await area.writeSmallObject('.provisioner/provenance.json', '{"import":{"id":"imp-1"}}\n');
    await area.sync();

    // Objects are there (the stored manifest too, uploaded as it was written), the dataset is
    // not: the listings and exists() rely on the commit object.
    expect(await listKeys(client, bucket, `tenant/${TARGET}/`)).toHaveLength(4);
    expect(await storage.exists(TARGET)).toBe(false);
    expect(await storage.list(RAW)).toEqual([]);
    expect(await storage.listStaging()).toEqual(['imp-1~data~a1']);

    await storage.publish('imp-1~data~a1', TARGET);
    expect(await storage.exists(TARGET)).toBe(true);
    expect(await storage.list(RAW)).toEqual(['DS-1']);
    expect(await storage.list('projects/PRJ1/SUB-1')).toEqual(['data']);
    expect(await storage.listStaging()).toEqual([]);
    expect((await get(`tenant/${TARGET}/reads/big.bin`)).equals(big)).toBe(true);
    expect((await get(`tenant/${TARGET}/empty.dat`)).length).toBe(0);
    const head = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: `tenant/${TARGET}/reads/big.bin` }),
    );
    expect(head.ETag).toMatch(/-3"$/); // three parts, each sent with its Content-MD5
    expect(storage.location(TARGET)).toBe(`s3://${bucket}/tenant/${TARGET}`);
    expect((await storage.readObject(datasetCommitObject(TARGET)))!.toString()).toContain('imp-1');

    // Exactly once without conditional writes: a second publisher of the same dataset is refused
    // by the check before its commit object, and its removal deletes nothing of the dataset.
    const second = await storage.openStaging('imp-2~data~a1', TARGET);
    await second.writeSmallObject('.provisioner/provenance.json', '{"import":{"id":"imp-2"}}\n');
    await expect(storage.publish('imp-2~data~a1', TARGET)).rejects.toBeInstanceOf(
      TargetExistsError,
    );
    await storage.removeStaging('imp-2~data~a1');
    expect((await storage.readObject(datasetCommitObject(TARGET)))!.toString()).toContain('imp-1');
    expect(await listKeys(client, bucket, `tenant/${TARGET}/`)).toHaveLength(5);
  });

  it('confirms every object from one listing, not a HEAD each; an object stored otherwise fails the publish before its commit object', async () => {
    const target = `${RAW}/DS-LIST`;
    const commands: string[] = [];
    client.middlewareStack.add(
      (next, context) => (args) => {
        commands.push(context.commandName!);
        return next(args);
      },
      { step: 'initialize', name: 'countCommands' },
    );
    try {
      const stage = async (id: string) => {
        const area = await storage.openStaging(id, target);
        for (let i = 0; i < 30; i++) {
          const writer = await area.createObject(`f/${i}.txt`, 5);
          await writer.write(Buffer.from(`n=${String(i).padStart(2, '0')}`));
          await writer.commit();
        }
        const big = await area.createObject('big.bin', PART + 1);
        await big.write(randomBytes(PART + 1));
        await big.commit();
        await area.writeSmallObject('.provisioner/provenance.json', `{"import":{"id":"${id}"}}\n`);
        return area;
      };

      await stage('imp-4~data~a1');
      commands.length = 0;
      // An object overwritten behind the import's back (same size, other bytes): the listing
      // shows another ETag, the object confirms it, and nothing is committed.
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: `tenant/${target}/f/7.txt`, Body: 'n=99!' }),
      );
      const error = await storage.publish('imp-4~data~a1', target).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(S3VerificationError);
      expect(String(error)).toContain(`tenant/${target}/f/7.txt`);
      expect(await storage.exists(target)).toBe(false);
      expect(await listKeys(client, bucket, `tenant/${target}/.provisioner/`)).toEqual([]);
      await storage.removeStaging('imp-4~data~a1');

      // The same, stored as sent: 31 objects confirmed by one listing page, no HEAD per object.
      await stage('imp-5~data~a1');
      commands.length = 0;
      await storage.publish('imp-5~data~a1', target);
      expect(commands.filter((c) => c === 'ListObjectsV2Command')).toHaveLength(1);
      // The staging record's check, the commit object's absence and its read-back.
      expect(commands.filter((c) => c === 'HeadObjectCommand')).toHaveLength(3);
      expect(await storage.exists(target)).toBe(true);
    } finally {
      client.middlewareStack.remove('countCommands');
    }
  });

  it("removing a dead attempt's staging aborts its multipart uploads and deletes its objects", async () => {
    const target = `${RAW}/DS-DEAD`;
    const area = await storage.openStaging('imp-3~data~a1', target);
    const done = await area.createObject('done.txt', 4);
    await done.write(Buffer.from('done'));
    await done.commit();
    // A multipart upload cut off mid-way, as by a SIGKILL: two parts sent, never completed.
    const cut = await area.createObject('cut.bin', 4 * PART);
    await cut.write(randomBytes(2 * PART + 1));
    expect(await openUploads(client, bucket)).toEqual([`tenant/${target}/cut.bin`]);

    await storage.removeStaging('imp-3~data~a1');
    expect(await openUploads(client, bucket)).toEqual([]);
    expect(await listKeys(client, bucket, `tenant/${target}/`)).toEqual([]);
    expect(await storage.listStaging()).toEqual([]);
    // The attempt, had it survived, can no longer publish.
    await expect(area.sync()).rejects.toBeInstanceOf(StagingLostError);
  });

  it('gives a DRS client a pre-signed GET: whole and ranged reads of the stored object, nothing under another key', async () => {
    const body = randomBytes(300_000);
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: `tenant/${TARGET}/reads.bam`, Body: body }),
    );
    const source = await storage.byteSource(`${TARGET}/reads.bam`, 60);
    expect(source.kind).toBe('url');
    const url = (source as { url: string }).url;
    expect(url).toContain('X-Amz-Expires=60');
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(body)).toBe(true);
    const part = await fetch(url, { headers: { range: 'bytes=1000-1999' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(body.subarray(1000, 2000))).toBe(true);
    // Bound to its key: the same signature on another object's key is refused.
    const other = url.replace('/reads.bam?', '/other.bam?');
    expect((await fetch(other)).status).toBe(403);
  });

  it('a new attempt adopts the area of a stopped one: keeps what it recorded and the server holds as recorded, resumes its open upload, deletes the rest', async () => {
    const target = `${RAW}/DS-RESUME`;
    const key = (path: string) => `tenant/${target}/${path}`;
    const first = await storage.openStaging('imp-6~data~a1-w1-0001', target);
    const put = async (path: string, content: Buffer) => {
      const writer = await first.createObject(path, content.length);
      await writer.write(content);
      await writer.commit();
    };
    const staged = (path: string, content: Buffer) => ({
      path,
      size: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
      md5: null,
      source: { ino: 1, size: content.length, mtimeMs: 1, ctimeMs: 1 },
    });
    const one = Buffer.from('first file\n');
    const two = Buffer.from('second file\n');
    await put('one.txt', one);
    await put('two.txt', two);
    await put('unrecorded.txt', Buffer.from('copied, never recorded\n'));
    await first.record([staged('one.txt', one), staged('two.txt', two)]);
    // A large file stopped mid-way (SIGTERM): two parts confirmed, the upload left open.
    const big = randomBytes(3 * PART + 100);
    const cut = await first.createObject('big.bin', big.length);
    await cut.write(big.subarray(0, 2 * PART + 1));
    await cut.suspend!();
    // A stale writer replaced one recorded object with other bytes of the same size.
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key('two.txt'),
        Body: Buffer.from('SECOND FILE\n'),
      }),
    );

    const second = await storage.openStaging('imp-6~data~a2-w2-0002', target, {
      adopt: ['imp-6~data~a1-w1-0001'],
    });
    expect(
      Array.from({ length: second.inherited.length }, (_, i) => second.inherited.at(i)),
    ).toEqual([staged('one.txt', one)]);
    await second.discardExcept((path) => path === 'one.txt');
    expect(await storage.listStaging()).toEqual(['imp-6~data~a2-w2-0002']);
    expect(await listKeys(client, bucket, `tenant/${target}/`)).toEqual([key('one.txt')]);
    expect(await openUploads(client, bucket)).toEqual([key('big.bin')]);
    // The stopped attempt can no longer record or publish into what it staged.
    await expect(first.record([staged('one.txt', one)])).rejects.toBeInstanceOf(StagingLostError);

    const again = await second.createObject('big.bin', big.length);
    for (let i = 0; i < big.length; i += 1_000_000)
      await again.write(big.subarray(i, i + 1_000_000));
    await again.commit();
    expect(again.reusedBytes).toBe(2 * PART);
    expect((await get(key('big.bin'))).equals(big)).toBe(true);
    const redo = await second.createObject('two.txt', two.length);
    await redo.write(two);
    await redo.commit();
    await second.writeSmallObject('.provisioner/provenance.json', '{"import":{"id":"imp-6"}}\n');
    await storage.publish('imp-6~data~a2-w2-0002', target);
    expect((await get(key('two.txt'))).equals(two)).toBe(true);
    expect(await openUploads(client, bucket)).toEqual([]);
    expect(await listKeys(client, bucket, 'tenant/.staging/')).toEqual([]);
  });

  it('sends a stored manifest and a commit object past one part in parts, piece by piece; the commit object is completed only by publish', async () => {
    const target = `${RAW}/DS-PARTS`;
    const key = (path: string) => `tenant/${target}/${path}`;
    // Pieces as byteChunks hands them out (1 MiB each): 2.5 parts of each object.
    const pieces = (seed: number) =>
      Array.from({ length: Math.ceil((2.5 * PART) / MiB) }, (_, i) =>
        Buffer.alloc(i === 12 ? MiB / 2 : MiB, (seed + i) % 251),
      );
    const whole = (seed: number) => Buffer.concat(pieces(seed));
    const area = await storage.openStaging('imp-9~data~a1', target);
    const file = await area.createObject('data.txt', 5);
    await file.write(Buffer.from('data\n'));
    await file.commit();
    await area.writeSmallObject('.provisioner/manifest-sha256.txt', pieces(1));
    await area.writeSmallObject('.provisioner/provenance.json', pieces(2));
    await area.sync();
    // The manifest is stored (multipart), the commit object's parts are sent but not completed.
    expect(await listKeys(client, bucket, `tenant/${target}/`)).toEqual([
      key('.provisioner/manifest-sha256.txt'),
      key('data.txt'),
    ]);
    expect(await openUploads(client, bucket)).toEqual([key('.provisioner/provenance.json')]);
    expect(await storage.exists(target)).toBe(false);
    const manifestHead = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: key('.provisioner/manifest-sha256.txt') }),
    );
    expect(manifestHead.ETag).toMatch(/-3"$/);

    await storage.publish('imp-9~data~a1', target);
    expect(await storage.exists(target)).toBe(true);
    expect((await get(key('.provisioner/manifest-sha256.txt'))).equals(whole(1))).toBe(true);
    expect((await get(key('.provisioner/provenance.json'))).equals(whole(2))).toBe(true);
    expect(await openUploads(client, bucket)).toEqual([]);
    expect(await listKeys(client, bucket, 'tenant/.staging/')).toEqual([]);
  });

  it('an object written one part at a time holds one part buffer; the default sends parts while the next fills', async () => {
    const written = async (partsInFlight?: number) => {
      const pool = new PartBufferPool(PART, 3);
      const target = { client, put: signedPutOf(client), bucket, pool };
      const key = `tenant/in-flight/${partsInFlight ?? 'default'}.bin`;
      const writer = new S3ObjectWriter(target, key, { partsInFlight });
      const bytes = randomBytes(3 * PART + 1);
      for (let i = 0; i < bytes.length; i += MiB) await writer.write(bytes.subarray(i, i + MiB));
      await writer.commit();
      expect((await get(key)).equals(bytes)).toBe(true);
      return pool.allocatedBuffers;
    };
    expect(await written(1)).toBe(1);
    expect(await written()).toBeGreaterThan(1);
  });

  it('a worker killed after the flush (commit object in parts, not completed): the next attempt adopts the area, removes the old parts and publishes its own', async () => {
    const target = `${RAW}/DS-KILLED`;
    const key = (path: string) => `tenant/${target}/${path}`;
    const staged = (path: string, content: Buffer) => ({
      path,
      size: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
      md5: null,
      source: { ino: 1, size: content.length, mtimeMs: 1, ctimeMs: 1 },
    });
    const content = Buffer.from('kept file\n');
    const first = await storage.openStaging('imp-10~data~a1', target);
    const writer = await first.createObject('kept.txt', content.length);
    await writer.write(content);
    await writer.commit();
    await first.record([staged('kept.txt', content)]);
    await first.writeSmallObject('.provisioner/manifest-sha256.txt', 'old manifest\n');
    await first.writeSmallObject('.provisioner/provenance.json', [
      randomBytes(PART),
      Buffer.from('old provenance tail\n'),
    ]);
    // Killed here: never published, the area left as it is.

    const second = await storage.openStaging('imp-10~data~a2', target, {
      adopt: ['imp-10~data~a1'],
    });
    expect(second.inherited.length).toBe(1);
    expect(second.inherited.at(0)).toEqual(staged('kept.txt', content));
    await second.discardExcept((path) => path === 'kept.txt');
    // The old manifest goes; the kept file stays; the old commit object was never visible.
    expect(await listKeys(client, bucket, `tenant/${target}/`)).toEqual([key('kept.txt')]);
    expect(await storage.exists(target)).toBe(false);
    await second.record([staged('kept.txt', content)]);
    await second.writeSmallObject('.provisioner/manifest-sha256.txt', 'new manifest\n');
    await second.writeSmallObject('.provisioner/provenance.json', '{"import":{"id":"imp-10"}}\n');
    await storage.publish('imp-10~data~a2', target);
    expect((await get(key('.provisioner/manifest-sha256.txt'))).toString()).toBe('new manifest\n');
    expect((await get(key('.provisioner/provenance.json'))).toString()).toContain('imp-10');
    expect(await openUploads(client, bucket)).toEqual([]);
    expect(await listKeys(client, bucket, 'tenant/.staging/')).toEqual([]);
  });

  it('a stored manifest is never written over a committed dataset', async () => {
    const area = await storage.openStaging('imp-11~data~a1', `${RAW}/DS-TWICE`);
    await area.writeSmallObject('.provisioner/manifest-sha256.txt', 'one\n');
    await area.writeSmallObject('.provisioner/provenance.json', '{"import":{"id":"imp-11"}}\n');
    await storage.publish('imp-11~data~a1', `${RAW}/DS-TWICE`);
    const again = await storage.openStaging('imp-12~data~a1', `${RAW}/DS-TWICE`);
    await expect(
      again.writeSmallObject('.provisioner/manifest-sha256.txt', 'two\n'),
    ).rejects.toBeInstanceOf(TargetExistsError);
    await storage.removeStaging('imp-12~data~a1');
    expect((await get(`tenant/${RAW}/DS-TWICE/.provisioner/manifest-sha256.txt`)).toString()).toBe(
      'one\n',
    );
  });

  it('a refused credential is StorageRefusedError (permanent); readiness names the reason', async () => {
    const refused = new S3Storage(testS3Client(server, 'wrong-secret'), {
      bucket,
      prefix: '',
      partBytes: PART,
      uploadConcurrency: 1,
    });
    await expect(refused.exists(TARGET)).rejects.toBeInstanceOf(StorageRefusedError);
    await expect(refused.checkReady()).rejects.toThrow(/credential was refused/);
    const missing = new S3Storage(client, {
      bucket: `${bucket}-none`,
      prefix: '',
      partBytes: PART,
      uploadConcurrency: 1,
    });
    await expect(missing.checkReady()).rejects.toThrow(/does not exist/);
    await expect(storage.checkReady()).resolves.toBeUndefined();
  });

  it('a server that does not answer is a plain (transient) error, not a refusal', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((r) => closed.close(() => r()));
    const down = new S3Storage(
      createS3Client({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
        maxAttempts: 1,
      }),
      { bucket, prefix: '', partBytes: PART, uploadConcurrency: 1 },
    );
    const error = await down.exists(TARGET).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(StorageRefusedError);
    await expect(down.checkReady()).rejects.toThrow(/does not answer/);
  });
});
