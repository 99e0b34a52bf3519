import { Logger } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { IpAllowList, resolveClientIp } from '@app/auth';
import { ForbiddenError } from '@app/errors';
import type { CatalogSettings } from '../config/catalog.settings';

/** The webhook's paths; POST is their only method (anything else is the router's 405). */
export const ACCESS_REQUEST_PATHS = /^\/api\/accessreq(\/revoke)?$/;

/**
 * The webhook's own gate (it takes no API key): the integration must be switched on, and the
 * caller's address must be on the allow-list. The address is the socket peer, or the hop our
 * trusted proxies appended to X-Forwarded-For; what a client wrote there itself is ignored.
 */
export class AccessRequestGate {
  private readonly logger = new Logger('AccessRequestGate');
  private readonly allowed: IpAllowList;
  private readonly trustedProxies: IpAllowList;

  constructor(private readonly settings: CatalogSettings) {
    // Both lists were validated at boot; parsing cannot fail here.
    this.allowed = IpAllowList.parse(settings.ACCESSREQ_ALLOWED_IP_ADDRESSES);
    this.trustedProxies = IpAllowList.parse(settings.TRUSTED_PROXIES);
  }

  check(req: Request): void {
    if (!this.settings.ACCESSREQ_INTEGRATION_ENABLED) {
      throw new ForbiddenError('Access-request integration is disabled');
    }
    const ip = resolveClientIp(
      req.socket.remoteAddress,
      req.headers['x-forwarded-for'],
      this.trustedProxies,
    );
    if (!this.allowed.allows(ip)) {
      this.logger.warn(
        { ip, peer: req.socket.remoteAddress },
        'access request from a caller not on the allow-list',
      );
      throw new ForbiddenError('Caller is not allowed to send access requests');
    }
  }

  /**
   * The same check before the body is parsed, so a refused caller gets its 403 even when it
   * sends a malformed or oversized body (the contract orders the gate before validation).
   */
  middleware(): RequestHandler {
    return (req: Request, _res: Response, next: NextFunction) => {
      if (req.method !== 'POST' || !ACCESS_REQUEST_PATHS.test(req.path)) return next();
      try {
        this.check(req);
        next();
      } catch (error) {
        next(error);
      }
    };
  }
}
