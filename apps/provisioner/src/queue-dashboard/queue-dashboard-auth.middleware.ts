import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { createHmac } from 'node:crypto';
import { API_KEY_RESOLVER, constantTimeEqual, extractApiKey } from '@app/auth';
import type { ApiKeyResolver } from '@app/auth';
import { ForbiddenError, UnauthorizedError } from '@app/errors';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';

export const DASHBOARD_COOKIE = 'queue_dashboard';
const SESSION_SECONDS = 8 * 3600;

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
 * dashboard's path, holding an HMAC of the write key. Rotating the key ends every session.
 */
@Injectable()
export class QueueDashboardAuthMiddleware implements NestMiddleware {
  constructor(
    @Inject(API_KEY_RESOLVER) private readonly keys: ApiKeyResolver,
    @Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings,
  ) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    const apiKey = extractApiKey(req);
    if (apiKey === undefined) {
      const session = cookieValue(req, DASHBOARD_COOKIE);
      const expected = this.sessionToken();
      if (session !== undefined && expected !== undefined && constantTimeEqual(session, expected))
        return next();
      throw new UnauthorizedError('API key required');
    }
    const principal = await this.keys.resolve(apiKey);
    if (principal === null) throw new UnauthorizedError('Invalid API key');
    if (!principal.canWrite)
      throw new ForbiddenError('The queue dashboard requires the provisioner write key');
    this.startSession(req, res);
    next();
  }

  private sessionToken(): string | undefined {
    const writeKey = this.settings.PROVISIONER_API_KEY;
    return writeKey === undefined
      ? undefined
      : createHmac('sha256', writeKey).update('queue-dashboard-session').digest('base64url');
  }

  private startSession(req: Request, res: Response): void {
    const token = this.sessionToken();
    if (token === undefined) return;
    const path = req.baseUrl || '/';
    // Secure whenever the client reached us over TLS (directly or through the ingress).
    const secure = req.secure || req.headers['x-forwarded-proto'] === 'https';
    res.append(
      'Set-Cookie',
      `${DASHBOARD_COOKIE}=${token}; Path=${path}; Max-Age=${SESSION_SECONDS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
    );
  }
}
