import { request } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EarlyAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface IncompleteBodyRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent at once; the Content-Length announces far more, which never comes. */
  firstBytes?: Buffer | string;
  /** How long to wait for an answer before failing (the answer needs no body, so it is quick). */
  deadlineMs?: number;
}

/** The port of a listening server, listening on 127.0.0.1 first when it is not yet. */
export async function portOf(server: Server): Promise<number> {
  if (!server.listening) await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}

/**
 * Sends a request whose body is announced but never finished and returns the answer the server
 * gives while it still waits for the rest. A server that reads the body before answering never
 * answers: the deadline turns that into a failure naming the request.
 */
export function answerWithoutBody(port: number, spec: IncompleteBodyRequest): Promise<EarlyAnswer> {
  const first = Buffer.from(spec.firstBytes ?? '{"a":');
  const deadlineMs = spec.deadlineMs ?? 4000;
  return new Promise((done, fail) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: spec.method,
      path: spec.path,
      agent: false,
      headers: {
        'Content-Type': 'application/json',
        ...spec.headers,
        'Content-Length': String(first.length + 1024 * 1024),
      },
    });
    const deadline = setTimeout(() => {
      req.destroy();
      fail(
        new Error(
          `${spec.method} ${spec.path}: no answer within ${deadlineMs} ms while the body was incomplete`,
        ),
      );
    }, deadlineMs);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        clearTimeout(deadline);
        req.destroy();
        done({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', (error) => {
      clearTimeout(deadline);
      fail(error);
    });
    req.write(first);
  });
}
