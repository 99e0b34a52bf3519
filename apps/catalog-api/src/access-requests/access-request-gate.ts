import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { IpAllowList, resolveClientIp } from '@app/auth';
import { AppError, ForbiddenError } from '@app/errors';
import type { CatalogSettings } from '../config/catalog.settings';
import type { AccessRequestRefusalsService, WebhookRoute } from './access-request-refusals.service';

/**
 * The webhook's paths; POST is their only method. Matched without regard to case, as the
 * router matches routes (Express's default): `POST /API/ACCESSREQ` reaches the webhook too,
 * so it must meet the gate before its body is read.
 */
export const ACCESS_REQUEST_PATHS = /^\/api\/accessreq(\/revoke)?$/i;

/** Which webhook route a path names, or undefined for any other path. */
export function webhookRoute(path: string): WebhookRoute | undefined {
  const match = ACCESS_REQUEST_PATHS.exec(path);
  if (match === null) return undefined;
  return match[1] === undefined ? 'grant' : 'revoke';
}

/**
 * REMS's event notifications (`:event-notification-targets`, an HTTP PUT of one event object,
 * CSCfi/rems `src/clj/rems/event_notification.clj`) are another feature than its entitlement
 * push. Sent here by mistake they would be retried for a day against a bare 405; this answer
 * says what arrived and where entitlements go.
 */
export class EventNotificationRefusedError extends AppError {
  constructor() {
    super(
      405,
      'method_not_allowed',
      'This is the REMS entitlement webhook, not a REMS event-notification target: event ' +
        'notifications (:event-notification-targets, HTTP PUT of one event) are not accepted. ' +
        'Configure REMS :entitlements-target with :add <catalog>/api/accessreq and ' +
        ':remove <catalog>/api/accessreq/revoke (HTTP POST of a JSON array of entitlements).',
      {
        allowed: ['POST'],
        entitlements_target: { add: '/api/accessreq', remove: '/api/accessreq/revoke' },
      },
      { Allow: 'POST' },
    );
  }
}

/**
 * The webhook's own gate (it takes no API key): the integration must be switched on, and the
 * caller's address must be on the allow-list. The address is the socket peer, or the hop our
 * trusted proxies appended to X-Forwarded-For; what a client wrote there itself is ignored.
 * Refusals are recorded (metric and log line) when a recorder is given.
 */
export class AccessRequestGate {
  private readonly allowed: IpAllowList;
  private readonly trustedProxies: IpAllowList;

  constructor(
    private readonly settings: CatalogSettings,
    private readonly refusals?: AccessRequestRefusalsService,
  ) {
    // Both lists were validated at boot; parsing cannot fail here.
    this.allowed = IpAllowList.parse(settings.ACCESSREQ_ALLOWED_IP_ADDRESSES);
    this.trustedProxies = IpAllowList.parse(settings.TRUSTED_PROXIES);
  }

  check(req: Request, route: WebhookRoute): void {
    if (!this.settings.ACCESSREQ_INTEGRATION_ENABLED) {
      throw this.refused(
        route,
        new ForbiddenError('Access-request integration is disabled'),
        'integration_disabled',
      );
    }
    const ip = resolveClientIp(
      req.socket.remoteAddress,
      req.headers['x-forwarded-for'],
      this.trustedProxies,
    );
    if (!this.allowed.allows(ip)) {
      // The address is logged for the operator, never echoed to the caller.
      throw this.refused(
        route,
        new ForbiddenError('Caller is not allowed to send access requests'),
        'caller_not_allowed',
        { ip, peer: req.socket.remoteAddress },
      );
    }
  }

  /**
   * The same check before the body is parsed, so a refused caller gets its 403 even when it
   * sends a malformed or oversized body (the contract orders the gate before validation). A
   * PUT (a REMS event notification) is answered here too, without reading its body.
   */
  middleware(): RequestHandler {
    return (req: Request, _res: Response, next: NextFunction) => {
      const route = webhookRoute(req.path);
      if (route === undefined) return next();
      try {
        if (req.method === 'PUT') {
          throw this.refused(route, new EventNotificationRefusedError(), 'event_notification');
        }
        if (req.method === 'POST') this.check(req, route);
        next();
      } catch (error) {
        next(error);
      }
    };
  }

  private refused(
    route: WebhookRoute,
    error: AppError,
    reason: 'integration_disabled' | 'caller_not_allowed' | 'event_notification',
    context: Record<string, unknown> = {},
  ): AppError {
    this.refusals?.record(route, {
      reasons: [reason],
      status: error.status,
      description: error.description,
      context,
    });
    return error;
  }
}
