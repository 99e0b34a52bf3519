import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { createHmac } from 'node:crypto';
import { API_KEY_RESOLVER, AuthFailureLimiter, constantTimeEqual, extractApiKey } from '@app/auth';
import type { ApiKeyResolver } from '@app/auth';
import { ForbiddenError, UnauthorizedError } from '@app/errors';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';

export const DASHBOARD_COOKIE = 'queue_dashboard';
export const SESSION_SECONDS = 8 * 3600;
/** Replicas' clocks may differ this much: a session issued "in the future" by less is fine. */
const CLOCK_SKEW_SECONDS = 60;
const SESSION_FORMAT = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

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

/**
 * Guards the queue dashboard and everything below it (its pages, scripts and JSON API) with
 * the provisioner write key. The global guard never sees these requests: the dashboard is
 * Express middleware, not a Nest route.
 *
 * A browser sends the key once (`?API_KEY=`); the dashboard's own scripts cannot send it
 * again, so a valid key also sets an HttpOnly, SameSite=Strict cookie, scoped to the
 * dashboard's path, holding its issue time signed with the write key (dashboardSessionToken).
 * The server refuses it SESSION_SECONDS after issue, whatever the browser keeps, so a copied
 * cookie cannot be replayed for ever; rotating the key ends every session at once.
 */
@Injectable()
export class QueueDashboardAuthMiddleware implements NestMiddleware {
  constructor(
    @Inject(API_KEY_RESOLVER) private readonly keys: ApiKeyResolver,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
    private readonly limiter: AuthFailureLimiter,
  ) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    const apiKey = extractApiKey(req);
    if (apiKey === undefined) {
      const session = cookieValue(req, DASHBOARD_COOKIE);
      const writeKey = this.settings.PROVISIONER_API_KEY;
      const check =
        session === undefined || writeKey === undefined
          ? 'invalid'
          : checkDashboardSession(writeKey, session);
      if (check === 'valid') return next();
      throw new UnauthorizedError(
        check === 'expired' ? 'Queue dashboard session expired' : 'API key required',
      );
    }
    // Keys are throttled as on every route; a session cookie is an unguessable MAC.
    const principal = await this.limiter.attempt(req, () => this.keys.resolve(apiKey));
    if (principal === null) throw new UnauthorizedError('Invalid API key');
    if (!principal.canWrite)
      throw new ForbiddenError('The queue dashboard requires the provisioner write key');
    this.startSession(req, res);
    next();
  }

  private startSession(req: Request, res: Response): void {
    const writeKey = this.settings.PROVISIONER_API_KEY;
    if (writeKey === undefined) return;
    const token = dashboardSessionToken(writeKey, Math.floor(Date.now() / 1000));
    const path = req.baseUrl || '/';
    // Secure whenever the client reached us over TLS (directly or through the ingress).
    const secure = req.secure || req.headers['x-forwarded-proto'] === 'https';
    res.append(
      'Set-Cookie',
      `${DASHBOARD_COOKIE}=${token}; Path=${path}; Max-Age=${SESSION_SECONDS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
    );
  }
}
