import { CanActivate, ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { IpAllowList, resolveClientIp } from '@app/auth';
import { ForbiddenError } from '@app/errors';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';

/**
 * The webhook's own gate (it takes no API key): the integration must be switched on, and the
 * caller's address must be on the allow-list. The address is the socket peer, or the hop our
 * trusted proxies appended to X-Forwarded-For; what a client wrote there itself is ignored.
 */
@Injectable()
export class AccessRequestGuard implements CanActivate {
  private readonly logger = new Logger(AccessRequestGuard.name);
  private readonly allowed: IpAllowList;
  private readonly trustedProxies: IpAllowList;

  constructor(@Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings) {
    // Both lists were validated at boot; parsing cannot fail here.
    this.allowed = IpAllowList.parse(settings.ACCESSREQ_ALLOWED_IP_ADDRESSES);
    this.trustedProxies = IpAllowList.parse(settings.TRUSTED_PROXIES);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.settings.ACCESSREQ_INTEGRATION_ENABLED) {
      throw new ForbiddenError('Access-request integration is disabled');
    }
    const req = context.switchToHttp().getRequest<Request>();
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
    return true;
  }
}
