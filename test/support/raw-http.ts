import { connect } from 'node:net';

export interface RawHttpAnswer {
  status: number;
  /** Header names lower-cased; the last value of a repeated header. */
  headers: Record<string, string>;
  body: Buffer;
}

/** Parses the first response in `raw` (status line, headers, a Content-Length body). */
export function parseRawResponse(raw: Buffer): RawHttpAnswer | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (match === null) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length =
    headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  const body = raw.subarray(end + 4, length === undefined ? undefined : end + 4 + length);
  return { status: Number(match[1]), headers, body };
}

/**
 * Writes `bytes` as they are on a fresh connection (no client library to fix them up) and
 * resolves with the first response once the server closes the connection or `timeoutMs`
 * passes; undefined when no complete response arrived. Used for what a normal client cannot
 * send: malformed request lines, oversized or invalid headers, broken framing.
 */
export function sendRaw(
  port: number,
  bytes: Buffer | string,
  timeoutMs = 10_000,
): Promise<RawHttpAnswer | undefined> {
  return new Promise((done, fail) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      done(parseRawResponse(Buffer.concat(chunks)));
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A reset after the answer arrived still leaves the answer to read.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') return finish();
      clearTimeout(timer);
      fail(error);
    });
    socket.on('connect', () => socket.write(bytes));
  });
}
