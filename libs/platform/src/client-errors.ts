import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { PinoLogger } from 'nestjs-pino';
import type { ErrorEnvelope } from '@app/errors';

/**
 * How long a refused connection may keep sending before it is cut: long enough for the rest of
 * a request already on its way (so the client reads our answer instead of a reset), short
 * enough that a client cannot hold sockets open this way.
 */
const LINGER_MS = 2000;

/** Sockets already answered: Node reports every later chunk on a failed parser again. */
const answered = new WeakSet<Duplex>();

interface ClientError extends Error {
  code?: string;
}

/** Status and description for what Node's parser (llhttp) refused; Node's own mapping, ours in words. */
function refusal(code = ''): { status: number; description: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, description: 'Request header fields too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, description: 'Chunk extensions too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, description: 'Request not received in time' };
    default:
      return { status: 400, description: 'Malformed HTTP request' };
  }
}

function rawResponse(status: number, id: string, envelope: ErrorEnvelope): Buffer {
  const body = JSON.stringify(envelope);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${id}`,
    'Connection: close',
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`, 'latin1');
}

/**
 * Answers what Node's HTTP parser refuses before any app code runs (oversized headers, a
 * malformed request line or header, a bad chunk, a request that took too long) in the error
 * envelope with a request id, and logs it with that id, instead of Node's bare status line.
 * Like Node's default, nothing is written once a response to an earlier request on the
 * connection has started; the connection is closed either way. The raw bytes (`rawPacket`)
 * are never logged: they may hold a key.
 */
export function onClientError(error: ClientError, socket: Duplex): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  try {
    answer(error, socket);
  } catch {
    // An exception here would be uncaught, and a client could end the process with one bad
    // request: close the connection instead.
    socket.destroy();
  }
}

function answer(error: ClientError, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, description } = refusal(error.code);
  const id = randomUUID();
  // Unset until the logging module has started (root is typed as always present).
  const root = PinoLogger.root as PinoLogger['logger'] | undefined;
  root?.warn(
    { req: { id }, res: { statusCode: status }, err: { code: error.code, message: error.message } },
    'request refused by the HTTP parser',
  );
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  // An answer already started (a 401 or 405 written before its body was read, see
  // lingering-close) is delivered as written, then the connection closes: destroying the
  // socket here would drop those bytes before they leave.
  socket.end(
    inFlight?.headersSent
      ? undefined
      : rawResponse(status, id, { status: 'Error', description, more: {} }),
  );
  // Read and drop what the client is still sending, then close: closing with unread input
  // would reset the connection and could discard the answer before the client reads it.
  socket.resume();
  socket.once('end', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** Installs `onClientError` on a server (see configureHttpApp). */
export function answerClientErrors(server: Server): void {
  server.on('clientError', onClientError);
}
