import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import http, { IncomingMessage } from 'node:http';
import https from 'node:https';
import { NodeSha256 } from './node-sha256';
import { UNREACHABLE_CODES } from './s3-errors';

/** Time-outs of the client's requests, which the signed put keeps too (createS3Client). */
export interface S3Timeouts {
  /** Opening the connection (TCP and TLS). */
  connectMs: number;
  /** One request, from sending it to the answer's headers (the body of an upload included). */
  requestMs: number;
  /** No byte either way on the connection while a request or its answer is under way. */
  idleMs: number;
}

/**
 * Connections kept open to the endpoint, as the SDK's own handler keeps (its default, 50); an
 * idle one does not hold the process (Node's agent unrefs it).
 */
const MAX_SOCKETS = 50;
/** An error answer's body is read up to this much: its XML names the error. */
const ERROR_BODY_BYTES = 64 * 1024;
/** Back-off before a retry, as the SDK's standard strategy: full jitter of base × 2^n, capped. */
const RETRY_BASE_MS = 100;
const RETRY_CAP_MS = 20_000;
const THROTTLING = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'RequestTimeout']);

/** A key as S3 wants it in a path: each segment percent-encoded, RFC 3986 reserved too. */
export function encodeKeyPath(key: string): string {
  return key
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    )
    .join('/');
}

/** An error as the SDK shapes a service's refusal: `name` is S3's code, with the HTTP status. */
function serviceError(status: number, body: string): Error {
  const code = /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1];
  return Object.assign(new Error(message ?? code ?? `HTTP ${status}`), {
    name: code ?? `HTTP${status}`,
    $metadata: { httpStatusCode: status },
  });
}

const timeoutError = (what: string): Error =>
  Object.assign(new Error(`s3 request timed out: ${what}`), { name: 'TimeoutError' });

function retryable(error: unknown): boolean {
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  return (
    e.name === 'TimeoutError' ||
    UNREACHABLE_CODES.has(e.code ?? '') ||
    THROTTLING.has(e.name ?? '') ||
    status === 429 ||
    (status !== undefined && status >= 500)
  );
}

/** The SHA-256 of no bytes: what a request without a body signs as its payload. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 2xx answer's whole body, or null once it is past `limit` bytes. */
function readWhole(response: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        response.removeAllListeners('data');
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks, size)));
    response.on('error', reject);
    // Destroyed before its end (cut, timed out): what was read is not the object.
    response.on('close', () => {
      if (!response.complete) reject(timeoutError('the answer ended before its last byte'));
    });
  });
}

function readBody(response: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      if (size < limit) chunks.push(chunk.subarray(0, limit - size));
      size += chunk.length;
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

/**
 * PutObject as one signed HTTP request, beside the SDK client it takes its credentials, region,
 * endpoint and retry count from. The SDK spends about 1 ms of CPU on each request in its
 * middleware (endpoint rules, serialisation, retry bookkeeping), more than rclone spends on a
 * whole small object; an import of many small files is nothing but such requests. This sends the
 * same request (Signature V4 over the headers, Content-MD5 checked by the server, the body left
 * unsigned as the client's middleware does for uploads) for about a third of that. Multipart
 * uploads and every other call stay on the SDK: one request per 8 MiB does not feel its cost.
 * See docs/decisions/s3-single-put-signed-by-hand.md.
 */
export class SignedPut {
  private readonly signer: SignatureV4;
  private readonly bases = new Map<string, Promise<URL>>();
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  };

  constructor(
    private readonly client: S3Client,
    private readonly timeouts?: S3Timeouts,
  ) {
    this.signer = new SignatureV4({
      credentials: client.config.credentials,
      region: client.config.region,
      service: 's3',
      sha256: NodeSha256,
      // S3's rule: the path is signed as sent, not encoded a second time.
      uriEscapePath: false,
      applyChecksum: false,
    });
  }

  /** Stores `body` under `key`, its Content-MD5 given; answers the ETag the server returned. */
  async put(bucket: string, key: string, body: Uint8Array, md5Base64: string): Promise<string> {
    const attempts = await this.client.config.maxAttempts();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.putOnce(bucket, key, body, md5Base64);
      } catch (error) {
        if (attempt >= attempts || !retryable(error)) throw error;
        await delay(Math.random() * Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt));
      }
    }
  }

  /**
   * The bucket's URL as the SDK resolves it (path or virtual-hosted style, custom endpoint or
   * AWS's regional one): read once, from a pre-signed URL of a placeholder key.
   */
  private base(bucket: string): Promise<URL> {
    let base = this.bases.get(bucket);
    if (!base) {
      base = getSignedUrl(this.client, new PutObjectCommand({ Bucket: bucket, Key: 'k' }), {
        expiresIn: 60,
      }).then((signed) => {
        const url = new URL(signed);
        url.search = '';
        url.pathname = url.pathname.slice(0, -1);
        return url;
      });
      base.catch(() => this.bases.delete(bucket));
      this.bases.set(bucket, base);
    }
    return base;
  }

  /**
   * The whole of a small object, only the version `ifMatch` names (If-Match), in one GET signed
   * by hand, for the reason put is: reading many small objects through the SDK costs about as
   * much CPU again as the server spends answering them. Null when the object is more than
   * `maxBytes` (nothing more of it is read). A refusal is shaped as the SDK shapes it (412
   * PreconditionFailed, 404 NoSuchKey): the caller tells them apart as it does the SDK's.
   */
  async getWhole(
    bucket: string,
    key: string,
    ifMatch: string,
    maxBytes: number,
  ): Promise<{ body: Buffer; etag: string } | null> {
    const attempts = await this.client.config.maxAttempts();
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await this.send('GET', bucket, key, { 'if-match': ifMatch }, null, maxBytes);
        if (answer === null) return null;
        return { body: answer.body, etag: answer.etag };
      } catch (error) {
        if (attempt >= attempts || !retryable(error)) throw error;
        await delay(Math.random() * Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt));
      }
    }
  }

  private async putOnce(
    bucket: string,
    key: string,
    body: Uint8Array,
    md5Base64: string,
  ): Promise<string> {
    const answer = await this.send(
      'PUT',
      bucket,
      key,
      {
        'content-length': String(body.length),
        'content-md5': md5Base64,
        'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      },
      body,
      0,
    );
    return answer!.etag;
  }

  /**
   * One signed request; a 2xx answer's body is kept up to `keepBytes` (null past them: the
   * request is dropped), any other answer is the service's error.
   */
  private async send(
    method: 'GET' | 'PUT',
    bucket: string,
    key: string,
    headers: Record<string, string>,
    body: Uint8Array | null,
    keepBytes: number,
  ): Promise<{ body: Buffer; etag: string } | null> {
    const base = await this.base(bucket);
    const signed = await this.signer.sign({
      method,
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port ? Number(base.port) : undefined,
      path: `${base.pathname}${encodeKeyPath(key)}`,
      query: {},
      headers: {
        host: base.host,
        ...(method === 'GET' ? { 'x-amz-content-sha256': EMPTY_SHA256 } : {}),
        ...headers,
      },
    });
    const transport = base.protocol === 'https:' ? https : http;
    return new Promise<{ body: Buffer; etag: string } | null>((resolve, reject) => {
      let requestTimer: NodeJS.Timeout | undefined;
      const done = () => clearTimeout(requestTimer);
      const request = transport.request(
        {
          agent: this.agents[base.protocol as 'http:' | 'https:'],
          method,
          hostname: base.hostname,
          port: base.port || undefined,
          path: signed.path,
          headers: signed.headers,
        },
        (response) => {
          done();
          const status = response.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            readBody(response, ERROR_BODY_BYTES).then(
              (text) => reject(serviceError(status, text)),
              reject,
            );
            return;
          }
          const etag = String(response.headers.etag ?? '');
          if (keepBytes === 0) {
            response.resume();
            response.on('end', () => resolve({ body: Buffer.alloc(0), etag }));
            response.on('error', reject);
            return;
          }
          const length = Number(response.headers['content-length'] ?? NaN);
          if (length > keepBytes) {
            request.destroy();
            resolve(null);
            return;
          }
          readWhole(response, keepBytes).then((kept) => {
            if (kept === null) {
              request.destroy();
              resolve(null);
            } else if (Number.isFinite(length) && kept.length !== length)
              reject(
                Object.assign(new Error(`s3 answer cut short: ${kept.length} of ${length} bytes`), {
                  name: 'TimeoutError',
                }),
              );
            else resolve({ body: kept, etag });
          }, reject);
        },
      );
      request.on('error', (error) => {
        done();
        reject(error);
      });
      const limits = this.timeouts;
      if (limits) {
        // Without them a server that accepts and goes silent holds the request for ever.
        request.setTimeout(limits.idleMs, () =>
          request.destroy(timeoutError(`no byte for ${limits.idleMs} ms`)),
        );
        requestTimer = setTimeout(
          () => request.destroy(timeoutError(`no answer within ${limits.requestMs} ms`)),
          limits.requestMs,
        );
        request.on('socket', (socket) => {
          if (!socket.connecting) return;
          const connectTimer = setTimeout(
            () => request.destroy(timeoutError(`not connected within ${limits.connectMs} ms`)),
            limits.connectMs,
          );
          socket.once('connect', () => clearTimeout(connectTimer));
          socket.once('close', () => clearTimeout(connectTimer));
        });
      }
      request.end(body ?? undefined);
    });
  }
}
