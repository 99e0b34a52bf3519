import { request } from 'node:http';
import type { Attack } from './attacks';

export interface RawResponse {
  status: number;
  contentType: string;
  /** Set on everything the service answers, what Node's HTTP parser refuses included. */
  requestId: string | undefined;
  body: Buffer;
}

const MAX_READ = 2 * 1024 * 1024;

/**
 * Sends one request as generated, on its own connection (a hostile request may leave a kept-alive
 * socket unusable). A body always goes with its Content-Length: without it Node's client sends
 * a GET or DELETE body unframed, and the server rightly reads it as a malformed next request.
 */
export function send(port: number, attack: Attack): Promise<RawResponse> {
  return new Promise((done, fail) => {
    const headers = attack.body ? { ...attack.headers, 'Content-Length': String(attack.body.length) } : attack.headers;
    const req = request(
      { host: '127.0.0.1', port, method: attack.method, path: attack.path, headers, agent: false, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_READ) chunks.push(chunk);
        });
        res.on('end', () =>
          done({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            requestId: res.headers['x-request-id'] as string | undefined,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out after 30 s')));
    req.on('error', fail);
    req.end(attack.body);
  });
}

/** What is wrong with a response to hostile input, or undefined when it is fine. */
export function problemWith(attack: Attack, res: RawResponse): string | undefined {
  // 503 is the contract's answer for a dependency that is down or not configured (the identity
  // provider in these runs); any other 5xx is a server fault.
  if (res.status >= 500 && res.status !== 503) return `status ${res.status}: ${res.body.toString().slice(0, 300)}`;
  if (res.requestId === undefined) return `status ${res.status} without a request id`;
  if (res.status < 400) return undefined;
  if (res.contentType !== 'application/json; charset=utf-8') return `error with content type "${res.contentType}"`;
  if (attack.method === 'HEAD') return res.body.length === 0 ? undefined : 'HEAD answered with a body';
  let envelope: unknown;
  try {
    envelope = JSON.parse(res.body.toString());
  } catch {
    return `error body is not JSON: ${res.body.toString().slice(0, 200)}`;
  }
  const e = envelope as Record<string, unknown>;
  const keys = Object.keys(e ?? {}).sort().join(',');
  // The DRS routes (routing ignores case) add DRS 1.5's Error fields beside the envelope's:
  // msg and status_code, the same facts (apps/provisioner/src/drs/drs-errors.filter.ts).
  if (/^\/(ga4gh\/drs|drs-bytes)\//i.test(attack.path) && keys === 'description,more,msg,status,status_code') {
    if (e.msg !== e.description) return `DRS msg differs from the description: ${String(e.msg)}`;
    if (e.status_code !== res.status) return `DRS status_code ${String(e.status_code)} on a ${res.status}`;
  } else if (keys !== 'description,more,status') return `envelope keys are ${keys}`;
  if (e.status !== 'Error') return `envelope status ${String(e.status)}`;
  if (typeof e.description !== 'string' || e.description.length === 0) return 'envelope without description';
  if (typeof e.more !== 'object' || e.more === null || Array.isArray(e.more)) return 'envelope more is not an object';
  return undefined;
}

export interface AttackRun {
  tried: number;
  byStatus: Record<number, number>;
  problems: string[];
}

/** Sends every attack, `concurrency` at a time, and collects what went wrong. */
export async function runAttacks(port: number, attacks: Attack[], concurrency = 8): Promise<AttackRun> {
  const run: AttackRun = { tried: 0, byStatus: {}, problems: [] };
  let next = 0;
  const worker = async () => {
    while (next < attacks.length) {
      const attack = attacks[next++];
      run.tried++;
      const describe = `${attack.method} ${attack.path.slice(0, 200)} [${attack.note}]`;
      try {
        const res = await send(port, attack);
        run.byStatus[res.status] = (run.byStatus[res.status] ?? 0) + 1;
        const problem = problemWith(attack, res);
        if (problem) run.problems.push(`${describe}: ${problem}`);
      } catch (error) {
        // The server closing the connection on an oversized body is fine; on anything else it
        // means the request was not answered at all.
        const message = (error as Error).message;
        if (!(attack.body && attack.body.length > 0 && /ECONNRESET|EPIPE|socket hang up/.test(message))) {
          run.problems.push(`${describe}: no answer (${message})`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return run;
}
