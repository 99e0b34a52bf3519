import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { randomUUID } from 'node:crypto';
import type {
  IncomingHttpHeaders,
  IncomingMessage,
  OutgoingHttpHeaders,
  ServerResponse,
} from 'node:http';
import {
  NO_URL_TOKENS,
  REDACTED,
  redactApiKeys,
  redactPathTokens,
  type UrlTokens,
} from '@app/auth';
import { logSafeError } from '@app/errors';

export const REQUEST_ID_HEADER = 'x-request-id';
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Reuses a caller's request id when it is well-formed (so a proxy's id follows the request
 * through our logs), otherwise makes one; either way it is echoed in `X-Request-Id`.
 */
export function requestId(req: IncomingMessage & { id?: unknown }, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const id = assignRequestId(req);
  res.setHeader('X-Request-Id', id);
  return id;
}

/** requestId without the response header, for a caller that writes its headers itself. */
export function assignRequestId(req: IncomingMessage & { id?: unknown }): string {
  if (typeof req.id === 'string') return req.id;
  const incoming = req.headers[REQUEST_ID_HEADER];
  const id =
    typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  req.id = id;
  return id;
}

/**
 * Keys travel in the query string in the older form: never let one reach a log line, however
 * the parameter name is encoded (see `isApiKeyParameter`); nor the token of a route whose path
 * carries one (`urlTokens`, see `redactPathTokens`).
 */
export function redactUrl(
  url: string | undefined,
  urlTokens: UrlTokens = NO_URL_TOKENS,
): string | undefined {
  return url === undefined ? undefined : redactPathTokens(redactApiKeys(url), urlTokens);
}

/**
 * A browser that opened a page with `?API_KEY=` (the queue dashboard) sends that URL as the
 * Referer of everything the page loads: redacted like the request's own URL. The key headers
 * themselves are censored by the logger's `redact` paths.
 */
function redactHeaders(
  headers: IncomingHttpHeaders | undefined,
  urlTokens: UrlTokens,
): IncomingHttpHeaders | undefined {
  return headers?.referer === undefined
    ? headers
    : { ...headers, referer: redactUrl(headers.referer, urlTokens) };
}

/**
 * How a request appears in a log line. Tolerates partial requests (a connection refused by
 * Node's HTTP parser has only an id): a serializer that throws takes the process down.
 */
export function serializeRequest(
  req: { id?: unknown; method?: string; url?: string; headers?: IncomingHttpHeaders },
  urlTokens: UrlTokens = NO_URL_TOKENS,
) {
  return {
    id: req.id,
    method: req.method,
    url: redactUrl(req.url, urlTokens),
    headers: redactHeaders(req.headers, urlTokens),
  };
}

/**
 * How an answer appears in a log line: its status and headers, without the credentials an
 * answer hands out (the queue dashboard's session cookie in `Set-Cookie`; the pre-signed object
 * store URL a DRS access URL redirects to, whose signature is its query string).
 */
export function serializeResponse(res: {
  statusCode?: number | null;
  headers?: OutgoingHttpHeaders;
}) {
  const headers = res.headers === undefined ? undefined : { ...res.headers };
  if (headers?.['set-cookie'] !== undefined) headers['set-cookie'] = REDACTED;
  const location = headers?.location;
  if (headers !== undefined && typeof location === 'string' && location.includes('?'))
    headers.location = `${location.slice(0, location.indexOf('?'))}?${REDACTED}`;
  return { statusCode: res.statusCode, headers };
}

/**
 * The access-log line for a request answered outside the Nest pipeline (see the catalog's fast
 * reads): the same logger, serializers, redaction and message as the lines pino-http writes.
 * Only successful answers take that path, so the level is always info.
 */
export function logRequestCompleted(
  req: IncomingMessage,
  res: ServerResponse,
  responseTime: number,
): void {
  // Unset until the logging module has started (root is typed as always present).
  const root = PinoLogger.root as PinoLogger['logger'] | undefined;
  if (!root?.isLevelEnabled('info')) return;
  root.info(
    { req, res, responseTime },
    res.writableFinished ? 'request completed' : 'request aborted',
  );
}

/** The `LOG_LEVEL` values both apps accept (pino's levels). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface LoggingOptions {
  level: string;
  /** Pretty output for a developer terminal; JSON (the default) everywhere else. */
  pretty?: boolean;
  /** Credentials handed out in URLs, redacted in every URL logged (see `UrlTokens`). */
  urlTokens?: UrlTokens;
}

@Module({})
export class LoggingModule {
  static forRoot(options: LoggingOptions): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            level: options.level,
            genReqId: requestId,
            redact: {
              paths: [
                'req.headers["x-api-key"]',
                'req.headers.authorization',
                'req.headers.cookie',
              ],
              censor: '[REDACTED]',
            },
            serializers: {
              req: (req: Parameters<typeof serializeRequest>[0]) =>
                serializeRequest(req, options.urlTokens),
              res: serializeResponse,
              // Every `{ err }` of every logger: database errors without their SQL parameters.
              err: logSafeError,
            },
            // Health probes every few seconds would drown the useful lines.
            autoLogging: { ignore: (req) => (req.url ?? '').startsWith('/health') },
            customLogLevel: (_req, res, err) =>
              err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
          },
        }),
      ],
      exports: [LoggerModule],
    };
  }
}
