import { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import express, { json, NextFunction, Request, RequestHandler, Response, text } from 'express';
import { Logger } from 'nestjs-pino';
import { BodyParsingInterceptor } from './body-parsing.interceptor';
import { assertJsonLimits, DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_JSON_OBJECTS } from './json-depth';
import { lingeringClose } from './lingering-close';
import { answerClientErrors } from './client-errors';
import { requestId } from './logging.module';
import { rejectInvalidUtf8 } from './utf8-body';
import {
  AllExceptionsFilter,
  AppError,
  fromBodyParserError,
  RequestValidationPipe,
  UnsupportedMediaTypeError,
} from '@app/errors';

export interface HttpAppOptions {
  maxBodyBytes: number;
  /** Deepest nesting of arrays and objects in a JSON body (400 beyond; MAX_JSON_DEPTH). */
  maxJsonDepth?: number;
  /** Most arrays and objects in one JSON body (400 beyond; MAX_JSON_OBJECTS). */
  maxJsonObjects?: number;
  /** Routes that take a plain-text body (e.g. vocabulary uploads); all others take JSON only. */
  textBodyRoutes?: RegExp[];
  /**
   * Checks that run before routing (e.g. a caller allow-list). Bodies are read only after the
   * route's guards, so these run before any body too.
   */
  beforeBodyParsing?: RequestHandler[];
  /** POST routes whose JSON bodies may be larger than `maxBodyBytes` (e.g. catalog imports). */
  largeBodies?: { routes: RegExp[]; maxBodyBytes: number };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Refuses bodies that are neither JSON nor, on the routes that want it, plain text: without
 * this a form-encoded or XML body would reach a handler as `{}` and look like valid input.
 */
function requireJsonBodies(textBodyRoutes: RegExp[]) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!BODY_METHODS.has(req.method) || !hasBody(req)) return next();
    if (req.is(['application/json', 'application/*+json'])) return next();
    const textAllowed = textBodyRoutes.some((route) => route.test(req.path));
    if (textAllowed && req.is('text/plain')) return next();
    next(new UnsupportedMediaTypeError(textAllowed ? 'application/json or text/plain' : undefined));
  };
}

/**
 * Hands body-parser's failures on as our errors. Left raw, Nest turns a JSON syntax error into a
 * generic 400 that quotes the parser's message, and the filter can no longer tell it apart.
 * Errors of our own `verify` hook come through as they were thrown.
 */
function withOurErrors(parser: RequestHandler): RequestHandler {
  return (req, res, next) =>
    parser(req, res, (error?: unknown) =>
      next(
        error === undefined || error instanceof AppError
          ? error
          : (fromBodyParserError(error) ?? error),
      ),
    );
}

/**
 * The Express instance both apps run on. Strict routing must be set before anything creates
 * the router, so the app is made here: `/api/datasets/` is then a 404, not an alias.
 */
export function createHttpAdapter(): ExpressAdapter {
  const instance = express();
  instance.set('strict routing', true);
  return new ExpressAdapter(instance);
}

/**
 * Everything both apps do to their HTTP layer, in one place: JSON logs, body limits, the
 * error envelope for every error (the framework's and Node's parser's too), validation. The
 * entry points listen with `listenUntilSignalled` (graceful shutdown).
 * Create the app on `createHttpAdapter()` with `{ bufferLogs: true, bodyParser: false }`.
 *
 * Bodies are checked and parsed by an interceptor, i.e. after routing and the guards: a caller
 * without a valid key is refused before a byte of its body is inflated or parsed, and an
 * unknown route or a 405 never reads one either.
 */
export function configureHttpApp(app: NestExpressApplication, options: HttpAppOptions): void {
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  // X-Forwarded-For is interpreted by our own trusted-proxy rule, never by Express.
  app.set('trust proxy', false);
  // What Node's parser refuses never reaches Express: answered in the envelope too.
  answerClientErrors(app.getHttpServer());
  // The id is assigned before body parsing, so even a refused body gets an X-Request-Id.
  app.use((req: Request, res: Response, next: NextFunction) => {
    requestId(req, res);
    next();
  });
  app.use(lingeringClose);
  for (const handler of options.beforeBodyParsing ?? []) app.use(handler);
  const textBodyRoutes = options.textBodyRoutes ?? [];
  const jsonLimits = {
    maxDepth: options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
    maxObjects: options.maxJsonObjects ?? DEFAULT_MAX_JSON_OBJECTS,
  };
  const checkUtf8 = rejectInvalidUtf8('json');
  const jsonParser = (limit: number) =>
    withOurErrors(
      json({
        limit,
        type: ['application/json', 'application/*+json'],
        // The raw bytes, before JSON.parse: depth and count first (one linear scan), so
        // nothing that walks the parsed value (the UTF-8 report included) meets a deep one.
        verify: (req, res, body, encoding) => {
          assertJsonLimits(body, jsonLimits);
          checkUtf8(req, res, body, encoding);
        },
      }),
    );
  const bodySteps = [requireJsonBodies(textBodyRoutes)];
  const large = options.largeBodies;
  if (large !== undefined) {
    const parseLarge = jsonParser(large.maxBodyBytes);
    // A body read here is not read again by the parser below (body-parser skips a read body).
    bodySteps.push((req: Request, res: Response, next: NextFunction) =>
      req.method === 'POST' && large.routes.some((route) => route.test(req.path))
        ? parseLarge(req, res, next)
        : next(),
    );
  }
  bodySteps.push(jsonParser(options.maxBodyBytes));
  if (textBodyRoutes.length > 0) {
    bodySteps.push(
      withOurErrors(
        text({
          limit: options.maxBodyBytes,
          type: 'text/plain',
          verify: rejectInvalidUtf8('text'),
        }),
      ),
    );
  }
  app.useGlobalFilters(new AllExceptionsFilter());
  app.useGlobalInterceptors(new BodyParsingInterceptor(bodySteps));
  app.useGlobalPipes(new RequestValidationPipe());
}
