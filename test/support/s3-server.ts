import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { execFileSync } from 'node:child_process';
import { existsSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePortBlock } from '../../scripts/lib/child-process';
import { mapLimit } from '../../apps/provisioner/src/common/map-limit';
import { createS3Client } from '../../apps/provisioner/src/common/s3/s3-client';
import { S3Bucket } from '../../apps/provisioner/src/storage/s3/s3-bucket';
import { testServices } from './test-services';

const SCRIPT = resolve(__dirname, '../../scripts/s3/swift-s3-server.sh');
/** Installing the Debian packages on a fresh machine (~40 s), then the start (~5 s). */
const START_MS = 240_000;

/** The run's S3 server: Swift with s3api from scripts/s3/swift-s3-server.sh, or S3_TEST_ENDPOINT. */
export interface S3TestServer {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /**
   * The local Swift only (absent for S3_TEST_ENDPOINT): stores each file under `dir` as the
   * object `keyPrefix` + its path in the existing `bucket`, written on the server's disk by
   * Swift's own code (the script's `ingest`): ordinary objects, listed and read through s3api
   * as any other, in a fifth of the CPU of one PutObject each. For set-ups of many objects.
   */
  ingest?(bucket: string, keyPrefix: string, dir: string): void;
}

/** The script's `ingest` for the server whose files are in `env.S3_SERVER_DIR` (its default when unset). */
function ingestInto(env: NodeJS.ProcessEnv) {
  return (bucket: string, keyPrefix: string, dir: string): void => {
    execFileSync('bash', [SCRIPT, 'ingest', bucket, keyPrefix, dir], { env, stdio: 'inherit' });
  };
}

const port = (): number => Number(process.env.S3_SERVER_PORT ?? 9380);
const registeredMarker = (runId: string): string => join(tmpdir(), `${runId}-s3-server-user`);

async function answers(endpoint: string): Promise<boolean> {
  return fetch(`${endpoint}/healthcheck`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => r.ok,
    () => false,
  );
}

/**
 * Finds the S3 server, or starts the local Swift (installing it when missing) like the global
 * setup starts PostgreSQL. The run registers as one of the server's users (the script counts
 * them), so the global teardown stops it only when no other run is still using it.
 */
export async function s3TestServer(): Promise<S3TestServer> {
  const endpoint = process.env.S3_TEST_ENDPOINT ?? `http://127.0.0.1:${port()}`;
  const server = {
    endpoint,
    region: 'us-east-1',
    accessKeyId: process.env.S3_TEST_ACCESS_KEY_ID ?? 'test:tester',
    secretAccessKey: process.env.S3_TEST_SECRET_ACCESS_KEY ?? 'testing',
  };
  if (process.env.S3_TEST_ENDPOINT) return server;
  Object.assign(server, { ingest: ingestInto(process.env) });
  const { runId, pid } = testServices();
  const marker = registeredMarker(runId);
  if (existsSync(marker) && (await answers(endpoint))) return server;
  execFileSync('bash', [SCRIPT, 'start', runId, String(pid)], { stdio: 'inherit', timeout: START_MS });
  writeFileSync(marker, '');
  return server;
}

/** A Swift of the test's own, and the script's commands for it. */
export interface PrivateS3Server extends S3TestServer {
  /**
   * scripts/s3/swift-s3-server.sh on this server: `start` brings back what is not running;
   * `reset` stops it and deletes its directory, every object with it.
   */
  script(command: 'start' | 'reset'): void;
}

/**
 * Starts a Swift of the test's own (the same script, five free ports, its files in `dir`): for a
 * test that stops the server, or that stores more objects than are worth deleting one by one
 * (`reset` removes them with the directory, in a second: Swift deletes an object as it writes
 * one, and the S3 inbox's 10,000 took minutes). The test ends it with `reset`.
 */
export async function privateS3Server(dir: string, startMs = START_MS): Promise<PrivateS3Server> {
  const port = await freePortBlock(5);
  const env = { ...process.env, S3_SERVER_DIR: dir, S3_SERVER_PORT: String(port) };
  const script = (command: 'start' | 'reset') => {
    execFileSync('bash', [SCRIPT, command], { env, stdio: 'inherit', timeout: startMs });
  };
  script('start');
  return {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    accessKeyId: 'test:tester',
    secretAccessKey: 'testing',
    ingest: ingestInto(env),
    script,
  };
}

/** Global teardown: the run leaves the S3 server, stopping it if it was the last user of one a run started. */
export function releaseS3Server(runId: string): void {
  const marker = registeredMarker(runId);
  if (!existsSync(marker)) return;
  unlinkSync(marker);
  execFileSync('bash', [SCRIPT, 'release', runId], { stdio: 'inherit' });
}

/** The settings of a provisioner storing into `bucket` of `server` under `prefix`. */
export function s3StorageEnv(
  server: S3TestServer,
  bucket: string,
  prefix: string,
  secret = server.secretAccessKey,
): Record<string, string> {
  return {
    STORAGE_BACKEND: 's3',
    S3_ENDPOINT: server.endpoint,
    S3_REGION: server.region,
    S3_BUCKET: bucket,
    S3_PREFIX: prefix,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: server.accessKeyId,
    S3_SECRET_ACCESS_KEY: secret,
  };
}

export function testS3Client(server: S3TestServer, secret = server.secretAccessKey): S3Client {
  return createS3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: secret },
    maxAttempts: 1,
  });
}

/** A bucket of this run's own (named after the run id), created empty. */
export async function createTestBucket(client: S3Client, label: string): Promise<string> {
  const bucket = `${testServices().runId}-${label}`.toLowerCase().slice(0, 63);
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

/** Every key in the bucket (under `prefix`). */
export async function listKeys(client: S3Client, bucket: string, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

export async function openUploads(client: S3Client, bucket: string): Promise<string[]> {
  const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return (page.Uploads ?? []).map((u) => u.Key!);
}

/** Keys in one DeleteObjects request: S3's most. */
const DELETE_BATCH = 1000;
/**
 * DeleteObjects requests in flight. Swift's s3api deletes a request's keys two at a time
 * (`multi_delete_concurrency`), each a tombstone written and synced: one request at a time left
 * the server waiting on the disk, and emptying the S3 inbox's 10,000 objects took minutes.
 */
const DELETE_REQUESTS_IN_FLIGHT = 8;

/** Removes the bucket with everything in it (objects, then open uploads, then the bucket). */
export async function removeTestBucket(client: S3Client, bucket: string): Promise<void> {
  await new S3Bucket(client, {
    bucket,
    prefix: '',
    partBytes: 5 << 20,
    uploadConcurrency: 1,
  }).abortUploadsUnder('');
  const keys = await listKeys(client, bucket);
  const batches = Array.from({ length: Math.ceil(keys.length / DELETE_BATCH) }, (_, i) =>
    keys.slice(i * DELETE_BATCH, (i + 1) * DELETE_BATCH),
  );
  await mapLimit(batches, DELETE_REQUESTS_IN_FLIGHT, (batch) =>
    client.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
      }),
    ),
  );
  await client.send(new DeleteBucketCommand({ Bucket: bucket }));
}
