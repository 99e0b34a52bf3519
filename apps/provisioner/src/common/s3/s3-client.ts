import { S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { NodeSha256 } from './node-sha256';
import { type S3Timeouts, SignedPut } from './signed-put';

export interface S3ClientOptions {
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** Absent: the SDK's default chain (AWS_* variables, web identity, instance profile). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  maxAttempts?: number;
  /** Connection, request and idle time-outs (ms); absent: none (the SDK's default). */
  timeouts?: S3Timeouts;
}

/**
 * Data uploads whose bytes the server checks against their Content-MD5 (a signed header): their
 * body is not hashed again into the signature (x-amz-content-sha256: UNSIGNED-PAYLOAD), which
 * saves a SHA-256 pass over every byte in the worker and another in the server (Swift verifies
 * a signed payload's SHA-256 as it reads it). See docs/decisions/s3-storage-backend.md.
 */
const UNSIGNED_BODY_COMMANDS = new Set(['PutObjectCommand', 'UploadPartCommand']);

/**
 * An S3 client for any S3-compatible server, not only AWS: checksums only where an operation
 * requires one (the SDK's default, aws-chunked bodies with CRC32, is refused by Swift's s3api
 * and ignored by several others), and Content-MD5 on DeleteObjects, which S3 requires and which
 * recent SDKs replace with a CRC32 header (see docs/decisions/s3-storage-backend.md).
 */
export function createS3Client(options: S3ClientOptions): S3Client {
  const client = new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    credentials: options.credentials,
    maxAttempts: options.maxAttempts ?? 3,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Every request's signature, with the day's signing key made a KeyObject once (node-sha256.ts).
    sha256: NodeSha256,
    // Without these, a server that accepts the connection and then goes silent (frozen, a
    // half-open connection) holds the request, its copy lane and the import for ever. A time-out
    // fails the attempt of the request (TimeoutError), which the SDK retries, then the caller.
    requestHandler: options.timeouts && {
      connectionTimeout: options.timeouts.connectMs,
      requestTimeout: options.timeouts.requestMs,
      throwOnRequestTimeout: true,
      socketTimeout: options.timeouts.idleMs,
    },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      if (context.commandName === 'DeleteObjectsCommand' && request.headers) {
        const body = request.body;
        if (typeof body === 'string' || body instanceof Uint8Array) {
          request.headers['content-md5'] = createHash('md5').update(body).digest('base64');
          for (const name of Object.keys(request.headers))
            if (name.toLowerCase().startsWith('x-amz-checksum-')) delete request.headers[name];
        }
      }
      return next(args);
    },
    { step: 'build', name: 'deleteObjectsContentMd5' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (
        UNSIGNED_BODY_COMMANDS.has(context.commandName ?? '') &&
        request.headers &&
        request.headers['content-md5']
      )
        request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    },
    { step: 'build', name: 'unsignedPayloadWithContentMd5' },
  );
  signedPuts.set(client, new SignedPut(client, options.timeouts));
  return client;
}

const signedPuts = new WeakMap<S3Client, SignedPut>();

/**
 * The single-request PutObject of a client (see SignedPut), with the client's time-outs when
 * createS3Client made it; a client made otherwise gets one without time-outs.
 */
export function signedPutOf(client: S3Client): SignedPut {
  let put = signedPuts.get(client);
  if (!put) {
    put = new SignedPut(client);
    signedPuts.set(client, put);
  }
  return put;
}

/**
 * How an S3 store is named, by the storage and the S3 inbox alike (a server-side copy is made
 * only within one store): its endpoint, or AWS's region.
 */
export function s3StoreName(endpoint: string | undefined, region: string): string {
  return endpoint ? endpoint.replace(/\/+$/, '') : `aws:${region}`;
}
