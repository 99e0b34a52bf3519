import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, IncomingHttpHeaders, Server } from 'node:http';
import { createServer as createTcpServer, Server as TcpServer, Socket } from 'node:net';
import { createS3Client, signedPutOf } from '../src/common/s3/s3-client';
import { asStorageError } from '../src/storage/s3/s3-bucket';
import { StorageRefusedError, StorageUnavailableError } from '../src/storage/storage-system';
import {
  createTestBucket,
  removeTestBucket,
  s3TestServer,
  S3TestServer,
  testS3Client,
} from '../../../test/support/s3-server';

// Starting Swift from its installed packages takes ~5 s; installing them first ~40 s more.
jest.setTimeout(240_000);

const md5Of = (body: Buffer) => createHash('md5').update(body).digest();

async function listen<T extends Server | TcpServer>(server: T): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

const close = (server: Server | TcpServer) =>
  new Promise<void>((resolve) => server.close(() => resolve()));

function clientOf(endpoint: string, extra: Partial<Parameters<typeof createS3Client>[0]> = {}) {
  return createS3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    ...extra,
  });
}

/**
 * PutObject (and a small GetObject) as one signed request (SignedPut): against the real S3 server (Swift with s3api)
 * for what the server checks (signature, Content-MD5, keys), and against small servers of the
 * test's own for what Swift cannot be made to do (answer 503, go silent).
 */
describe('single-request PutObject (SignedPut)', () => {
  let server: S3TestServer;
  let client: S3Client;
  let bucket: string;

  beforeAll(async () => {
    server = await s3TestServer();
    client = testS3Client(server);
    bucket = await createTestBucket(client, 'signed-put');
  });
  afterAll(async () => {
    if (bucket) await removeTestBucket(client, bucket);
    client?.destroy();
  });
  jest.setTimeout(60_000);

  it('stores the bytes under the very key, however it is spelled, and answers the MD5 as ETag', async () => {
    const keys = [
      'plain/file.txt',
      'with space/and+plus=equals&amp.txt',
      "reserved/!'()*~;:@,$[].bin",
      'percent/100%25 and %.txt',
      'unicode/Ünïcødé-名前-🧬.fastq',
      'query?like#fragment.txt',
      'deep/a/b/c/d/e/f/g.txt',
    ];
    const put = signedPutOf(client);
    for (const key of keys) {
      const body = randomBytes(1000 + key.length);
      const etag = await put.put(bucket, key, body, md5Of(body).toString('base64'));
      expect(etag.replace(/"/g, '')).toBe(md5Of(body).toString('hex'));
      const read = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      expect(Buffer.from(await read.Body!.transformToByteArray()).equals(body)).toBe(true);
    }
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents!.map((o) => o.Key).sort()).toEqual([...keys].sort());
  });

  it('reads a small object whole by its ETag (If-Match), under its very key; another ETag is refused, a larger one is not read', async () => {
    const put = signedPutOf(client);
    const key = "read/Ünïcødé !'()* 100%.bin";
    const body = randomBytes(4096 + 7);
    const etag = await put.put(bucket, key, body, md5Of(body).toString('base64'));
    const read = await put.getWhole(bucket, key, etag, 1024 * 1024);
    expect(read!.body.equals(body)).toBe(true);
    expect(read!.etag).toBe(etag);
    const other = await put
      .getWhole(bucket, key, `"${'0'.repeat(32)}"`, 1024 * 1024)
      .catch((e) => e);
    expect(other).toMatchObject({ $metadata: { httpStatusCode: 412 } });
    expect(await put.getWhole(bucket, key, etag, 4096)).toBeNull();
    const gone = await put.getWhole(bucket, 'read/none.bin', etag, 1024 * 1024).catch((e) => e);
    expect(gone).toMatchObject({ name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } });
  });

  it('an empty body is an empty object', async () => {
    const empty = Buffer.alloc(0);
    await signedPutOf(client).put(bucket, 'empty', empty, md5Of(empty).toString('base64'));
    const read = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'empty' }));
    expect((await read.Body!.transformToByteArray()).length).toBe(0);
  });

  it('bytes that do not match their Content-MD5 are refused (BadDigest) and nothing is stored', async () => {
    const body = randomBytes(4096);
    const error = await signedPutOf(client)
      .put(bucket, 'corrupted', body, md5Of(Buffer.from('other')).toString('base64'))
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('BadDigest');
    expect((error as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(400);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'corr' }));
    expect(listed.KeyCount).toBe(0);
  });

  it('a wrong secret is refused by the server, as the storage names a refusal (permanent)', async () => {
    const wrong = testS3Client(server, 'wrong-secret');
    const body = Buffer.from('x');
    const error = await signedPutOf(wrong)
      .put(bucket, 'refused', body, md5Of(body).toString('base64'))
      .catch((e: unknown) => e);
    expect(asStorageError(error, bucket)).toBeInstanceOf(StorageRefusedError);
    wrong.destroy();
  });

  it('signs the headers the server must check, with the session token of temporary credentials', async () => {
    let seen: IncomingHttpHeaders | undefined;
    let path: string | undefined;
    const fake = createHttpServer((req, res) => {
      seen = req.headers;
      path = req.url;
      req.resume();
      req.on('end', () => res.writeHead(200, { ETag: '"e"' }).end());
    });
    const port = await listen(fake);
    const temporary = new S3Client({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'eu-west-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 's', sessionToken: 'token-1' },
    });
    const body = Buffer.from('hello');
    await signedPutOf(temporary).put('bkt', 'a b/c.txt', body, md5Of(body).toString('base64'));
    await close(fake);
    expect(path).toBe('/bkt/a%20b/c.txt');
    expect(seen!['x-amz-security-token']).toBe('token-1');
    expect(seen!['x-amz-content-sha256']).toBe('UNSIGNED-PAYLOAD');
    expect(seen!['content-md5']).toBe(md5Of(body).toString('base64'));
    const authorization = String(seen!.authorization);
    expect(authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request/,
    );
    const signed = /SignedHeaders=([^,]+)/.exec(authorization)![1].split(';');
    expect(signed).toEqual(expect.arrayContaining(['content-md5', 'host', 'x-amz-date']));
    temporary.destroy();
  });

  /**
   * As the SDK's standard retry strategy does (@smithy/util-retry, StandardRetryStrategy, and
   * its isThrottlingError/isTransientError in @smithy/service-error-classification): a 503
   * SlowDown is tried again, up to maxAttempts; a refusal (4xx) is not.
   */
  it('tries a throttled or failing request again, up to the client’s attempts; a refusal once', async () => {
    const answers: Array<[number, string]> = [];
    let requests = 0;
    const fake = createHttpServer((req, res) => {
      requests++;
      req.resume();
      req.on('end', () => {
        const [status, code] = answers.shift() ?? [200, ''];
        if (status === 200) res.writeHead(200, { ETag: '"ok"' }).end();
        else
          res
            .writeHead(status, { 'Content-Type': 'application/xml' })
            .end(`<?xml version="1.0"?><Error><Code>${code}</Code><Message>m</Message></Error>`);
      });
    });
    const port = await listen(fake);
    const retrying = clientOf(`http://127.0.0.1:${port}`, { maxAttempts: 3 });
    const body = Buffer.from('x');
    const md5 = md5Of(body).toString('base64');
    try {
      answers.push([503, 'SlowDown'], [500, 'InternalError']);
      await expect(signedPutOf(retrying).put('b', 'k', body, md5)).resolves.toBe('"ok"');
      expect(requests).toBe(3);

      requests = 0;
      answers.push([503, 'SlowDown'], [503, 'SlowDown'], [503, 'SlowDown']);
      const error = await signedPutOf(retrying)
        .put('b', 'k', body, md5)
        .catch((e: unknown) => e);
      expect(requests).toBe(3);
      expect(asStorageError(error, 'b')).toBeInstanceOf(StorageUnavailableError);

      requests = 0;
      answers.push([403, 'AccessDenied']);
      const refused = await signedPutOf(retrying)
        .put('b', 'k', body, md5)
        .catch((e: unknown) => e);
      expect(requests).toBe(1);
      expect(asStorageError(refused, 'b')).toBeInstanceOf(StorageRefusedError);
    } finally {
      retrying.destroy();
      await close(fake);
    }
  });

  it('a server that accepts and goes silent fails each try at the time-out, then for good', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => {
      sockets.push(socket);
      socket.resume();
    });
    const port = await listen(silent);
    const frozen = clientOf(`http://127.0.0.1:${port}`, {
      maxAttempts: 2,
      timeouts: { connectMs: 1000, requestMs: 600, idleMs: 400 },
    });
    const body = Buffer.from('x');
    const started = Date.now();
    const error = await signedPutOf(frozen)
      .put('b', 'k', body, md5Of(body).toString('base64'))
      .catch((e: unknown) => e);
    const took = Date.now() - started;
    frozen.destroy();
    for (const socket of sockets) socket.destroy();
    await close(silent);
    expect((error as Error).name).toBe('TimeoutError');
    expect(asStorageError(error, 'b')).toBeInstanceOf(StorageUnavailableError);
    // Two tries, each ended by its idle time-out (400 ms) rather than never (a timer may fire a
    // millisecond early by the wall clock, hence the margin).
    expect(sockets.length).toBe(2);
    expect(took).toBeGreaterThanOrEqual(700);
  });
});
