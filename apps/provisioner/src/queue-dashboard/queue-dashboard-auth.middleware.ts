import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { createHmac } from 'node:crypto';
import {
  API_KEY_HEADER,
  API_KEY_RESOLVER,
  AuthFailureLimiter,
  constantTimeEqual,
  queryCarriesApiKey,
} from '@app/auth';
import type { ApiKeyResolver } from '@app/auth';
import {
  BadRequestError,
  ForbiddenError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from '@app/errors';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';

export const DASHBOARD_COOKIE = 'queue_dashboard';
export const SESSION_SECONDS = 8 * 3600;
/** Replicas' clocks may differ this much: a session issued "in the future" by less is fine. */
const CLOCK_SKEW_SECONDS = 60;
const SESSION_FORMAT = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;
/** Below the dashboard's path: the login form and where it posts, and the logout. */
export const LOGIN_PATH = '/login';
export const LOGOUT_PATH = '/logout';
/** The login form's field holding the key, and the largest form body read. */
export const LOGIN_FIELD = 'api_key';
export const LOGIN_BODY_MAX_BYTES = 4096;
const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * A session cookie's value: its issue time (Unix seconds) and an HMAC of that time keyed by
 * the write key, so it expires on its own, cannot be moved in time, and dies with the key.
 */
export function dashboardSessionToken(writeKey: string, issuedAt: number): string {
  const mac = createHmac('sha256', writeKey)
    .update(`queue-dashboard-session\n${issuedAt}`)
    .digest('base64url');
  return `${issuedAt}.${mac}`;
}

type SessionCheck = 'valid' | 'expired' | 'invalid';

/** Checks a cookie value: signed with this write key, issued within the last SESSION_SECONDS. */
export function checkDashboardSession(
  writeKey: string,
  token: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): SessionCheck {
  const match = SESSION_FORMAT.exec(token);
  if (match === null) return 'invalid';
  const issuedAt = Number(match[1]);
  if (!constantTimeEqual(token, dashboardSessionToken(writeKey, issuedAt))) return 'invalid';
  if (issuedAt > nowSeconds + CLOCK_SKEW_SECONDS) return 'invalid';
  return nowSeconds - issuedAt < SESSION_SECONDS ? 'valid' : 'expired';
}

function cookieValue(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/** A browser opening a page (not the dashboard's scripts or JSON API). */
const isPageNavigation = (req: Request): boolean =>
  (req.method === 'GET' || req.method === 'HEAD') &&
  (req.headers.accept ?? '').includes('text/html');

/** The login page: a form posting the key to this same path; nothing of the request in it. */
function loginPage(action: string, expired: boolean): string {
  const notice = expired ? '<p role="status">The session expired: sign in again.</p>' : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Provisioner queues: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Provisioner queues</h1>${notice}
<form method="post" action="${action}">
<label for="${LOGIN_FIELD}">Provisioner write key</label>
<input id="${LOGIN_FIELD}" name="${LOGIN_FIELD}" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form></main></body></html>
`;
}

/** Reads a small url-encoded form body: at most LOGIN_BODY_MAX_BYTES, else 413. */
async function readForm(req: Request): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== FORM_TYPE) throw new UnsupportedMediaTypeError(FORM_TYPE);
  if (Number(req.headers['content-length'] ?? 0) > LOGIN_BODY_MAX_BYTES)
    throw new PayloadTooLargeError(LOGIN_BODY_MAX_BYTES);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > LOGIN_BODY_MAX_BYTES) throw new PayloadTooLargeError(LOGIN_BODY_MAX_BYTES);
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Guards the queue dashboard and everything below it (its pages, scripts and JSON API) with
 * the provisioner write key. The global guard never sees these requests: the dashboard is
 * Express middleware, not a Nest route.
 *
 * The key is never taken from a URL, where access logs and browser histories keep it: a request
 * carrying one in its query string is refused (400) whatever else it carries. A browser signs in
 * through the login form (`POST <dashboard>/login`, the key in the form body); a script sends
 * the `X-API-Key` header. Either sets an HttpOnly, SameSite=Strict cookie scoped to the
 * dashboard's path, holding its issue time signed with the write key (dashboardSessionToken),
 * which the dashboard's own scripts then carry. The server refuses it SESSION_SECONDS after
 * issue, whatever the browser keeps, so a copied cookie cannot be replayed for ever; rotating the
 * key ends every session at once. A page opened without a session is sent to the login form.
 */
@Injectable()
export class QueueDashboardAuthMiddleware implements NestMiddleware {
  constructor(
    @Inject(API_KEY_RESOLVER) private readonly keys: ApiKeyResolver,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
    private readonly limiter: AuthFailureLimiter,
  ) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    if (queryCarriesApiKey(req.originalUrl))
      throw new BadRequestError(
        'The queue dashboard never takes a key in the URL: sign in with its login form or send the X-API-Key header (and rotate a key that was sent in a URL)',
      );
    if (req.path === LOGIN_PATH) return this.loginRoute(req, res);
    if (req.path === LOGOUT_PATH) return this.logout(req, res);
    const headerKey = req.headers[API_KEY_HEADER];
    if (typeof headerKey === 'string' && headerKey !== '') {
      await this.signIn(req, res, headerKey);
      return next();
    }
    const session = cookieValue(req, DASHBOARD_COOKIE);
    const writeKey = this.settings.PROVISIONER_API_KEY;
    const check =
      session === undefined || writeKey === undefined
        ? 'invalid'
        : checkDashboardSession(writeKey, session);
    if (check === 'valid') return next();
    if (isPageNavigation(req)) {
      res.redirect(303, `${req.baseUrl}${LOGIN_PATH}${check === 'expired' ? '?expired=1' : ''}`);
      return;
    }
    throw new UnauthorizedError(
      check === 'expired' ? 'Queue dashboard session expired' : 'API key required',
    );
  }

  private async loginRoute(req: Request, res: Response): Promise<void> {
    if (req.method === 'GET' || req.method === 'HEAD') {
      res
        .status(200)
        .set({
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': 'no-store',
          'Content-Security-Policy':
            "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
          'Referrer-Policy': 'no-referrer',
          'X-Content-Type-Options': 'nosniff',
        })
        .send(loginPage(`${req.baseUrl}${LOGIN_PATH}`, req.query.expired === '1'));
      return;
    }
    if (req.method !== 'POST') throw new MethodNotAllowedError(['GET', 'HEAD', 'POST']);
    const headerKey = req.headers[API_KEY_HEADER];
    if (typeof headerKey === 'string' && headerKey !== '') {
      await this.signIn(req, res, headerKey);
      res.status(204).end();
      return;
    }
    const key = (await readForm(req)).get(LOGIN_FIELD) ?? '';
    if (key === '') throw new UnauthorizedError('API key required');
    await this.signIn(req, res, key);
    res.redirect(303, `${req.baseUrl}/`);
  }

  private logout(req: Request, res: Response): void {
    if (req.method !== 'POST') throw new MethodNotAllowedError(['POST']);
    res.append('Set-Cookie', this.cookie(req, '', 0));
    res.redirect(303, `${req.baseUrl}${LOGIN_PATH}`);
  }

  /** Checks a key (throttled as on every route); the write key starts a session. */
  private async signIn(req: Request, res: Response, apiKey: string): Promise<void> {
    const principal = await this.limiter.attempt(req, () => this.keys.resolve(apiKey));
    if (principal === null) throw new UnauthorizedError('Invalid API key');
    if (!principal.canWrite)
      throw new ForbiddenError('The queue dashboard requires the provisioner write key');
    const writeKey = this.settings.PROVISIONER_API_KEY;
    if (writeKey === undefined) return;
    const token = dashboardSessionToken(writeKey, Math.floor(Date.now() / 1000));
    res.append('Set-Cookie', this.cookie(req, token, SESSION_SECONDS));
  }

  private cookie(req: Request, value: string, maxAge: number): string {
    const path = req.baseUrl || '/';
    // Secure whenever the client reached us over TLS (directly or through the ingress).
    const secure = req.secure || req.headers['x-forwarded-proto'] === 'https';
    return `${DASHBOARD_COOKIE}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
  }
}
