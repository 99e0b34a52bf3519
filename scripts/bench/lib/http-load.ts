import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_GLOBAL_KEY } from './catalog-process';
import { stopChild } from './processes';

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Transport errors, time-outs and non-2xx answers: any of them invalidates the figure. */
  failures: number;
}

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  paths?: string[];
  /**
   * Each request takes the next of these, across all connections: every path is asked exactly
   * once, and the load ends when the list does (durationSeconds does not apply).
   */
  uniquePaths?: string[];
  connections: number;
  durationSeconds?: number;
}

export async function measure(options: LoadOptions): Promise<LoadResult> {
  let next = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    ...(options.uniquePaths
      ? { amount: options.uniquePaths.length }
      : { duration: options.durationSeconds }),
    headers: options.headers,
    requests: options.uniquePaths
      ? [{ method: 'GET', setupRequest: (req) => ({ ...req, path: options.uniquePaths![next++] }) }]
      : options.paths?.map((path) => ({ method: 'GET', path })),
    timeout: 30,
  });
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}

/** One POST of a JSON body timed from the client side; the answer is read to the end. */
export async function timePost(url: string, json: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: json,
  });
  const body = Buffer.from(await res.arrayBuffer());
  return { ms: performance.now() - started, status: res.status, body };
}

/**
 * A write through the catalog's API that changes the data version (the bench viewer's identity
 * subject), as the global key; `n` makes each one a change.
 */
export async function benchWrite(appUrl: string, viewerId: number, n: number): Promise<void> {
  const res = await fetch(`${appUrl}/api/admin/users/${viewerId}`, {
    method: 'PATCH',
    headers: { 'X-API-Key': BENCH_GLOBAL_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ oidc_id: `bench-viewer-${n}` }),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`the bench write answered ${res.status}`);
}

/** POSTs one import document (`/api/<kind>`, global key) and times it until the answer is read. */
export async function importDocument(url: string, kind: string, body: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/api/${kind}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': BENCH_GLOBAL_KEY },
    body,
  });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`POST /api/${kind} answered ${res.status}: ${text.slice(0, 300)}`);
  return performance.now() - started;
}

/** One GET timed from the client side; the body is read to the end. */
export async function timeGet(url: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await fetch(url, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  return {
    ms: performance.now() - started,
    status: res.status,
    body,
    contentType: res.headers.get('content-type') ?? '',
  };
}

export interface CeilingServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the bare server of lib/ceiling-server.mjs serving `body` (written under `tempDir`);
 * `parseJsonBodies` makes it read and parse each request's JSON body first; `notModified` makes it
 * answer every request 304, with no body.
 */
export async function startCeiling(
  tempDir: string,
  body: Buffer,
  contentType: string,
  options: { parseJsonBodies?: boolean; notModified?: boolean } = {},
): Promise<CeilingServer> {
  const file = join(tempDir, `ceiling-${process.pid}-${Date.now()}.json`);
  writeFileSync(file, body);
  const args = [join(__dirname, 'ceiling-server.mjs'), file, contentType];
  if (options.parseJsonBodies) args.push('parse-json');
  else if (options.notModified) args.push('not-modified');
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new Error('ceiling server did not start')), 10_000);
    child.stdout.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      done(Number(chunk.toString().trim()));
    });
    child.once('exit', (code) => fail(new Error(`ceiling server exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => stopChild(child) };
}
