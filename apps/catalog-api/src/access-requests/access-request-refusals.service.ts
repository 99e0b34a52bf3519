import { Inject, Injectable, Logger } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { AppError, ValidationFailedError } from '@app/errors';
import type { FieldProblem } from '@app/errors';
import { METRICS_REGISTRY } from '@app/platform';
import { EntitlementsRefusedError, REFUSAL_REASONS, RefusalReason } from './entitlement-refusal';

/** The webhook's two routes, as the metric names them. */
export type WebhookRoute = 'grant' | 'revoke';
const ROUTES: WebhookRoute[] = ['grant', 'revoke'];

/** Items named in one log line; a larger refusal says how many more there were. */
const LOGGED_ITEMS_MAX = 100;
/** Values quoted from a refused body are cut to this length (the body is untrusted). */
const LOGGED_VALUE_MAX = 80;

/** One refused item as the log line names it: which entitlement, and why. */
export interface LoggedItem {
  index?: number;
  application?: unknown;
  resource?: unknown;
  user?: unknown;
  field?: string;
  reason: RefusalReason;
  message: string;
}

export interface Refusal {
  /** Every reason found in the delivery; each is counted once. */
  reasons: RefusalReason[];
  status: number;
  description: string;
  items?: LoggedItem[];
  /** Extra fields for the log line (the caller's address for the allow-list). */
  context?: Record<string, unknown>;
}

/**
 * Makes the webhook's refusals visible to an operator. REMS counts only 200 as delivered and
 * retries anything else for a day before giving up, so a refusal that only an operator can fix
 * (a dataset not yet in the catalog, two records sharing an email, a misconfigured allow-list)
 * would otherwise be noticed only in REMS's outbox table. Each refused delivery adds to
 * `catalog_access_request_refusals_total{route,reason}` and writes one warning naming the items.
 * Answers that a retry can fix by itself (503: identity provider or database unavailable) are
 * not refusals and are not counted here.
 */
@Injectable()
export class AccessRequestRefusalsService {
  private readonly logger = new Logger('AccessRequestRefusals');
  private readonly refusals: Counter<'route' | 'reason'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.refusals = new Counter({
      name: 'catalog_access_request_refusals_total',
      help: 'REMS entitlement deliveries the webhook refused, by route (grant, revoke) and reason',
      labelNames: ['route', 'reason'],
      registers: [registry],
    });
    // Present at zero from the start, so alerts on increase() work before the first refusal.
    for (const route of ROUTES)
      for (const reason of REFUSAL_REASONS) this.refusals.inc({ route, reason }, 0);
  }

  /**
   * Runs one delivery; when it is refused (a 4xx), records why before the error goes on to
   * become the response.
   */
  async watch<T>(route: WebhookRoute, body: unknown, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof AppError && error.status >= 400 && error.status < 500) {
        this.record(route, refusalOf(error, body));
      }
      throw error;
    }
  }

  record(route: WebhookRoute, refusal: Refusal): void {
    const reasons = [...new Set(refusal.reasons)];
    for (const reason of reasons) this.refusals.inc({ route, reason });
    const items = refusal.items ?? [];
    this.logger.warn(
      {
        route,
        reasons,
        status: refusal.status,
        description: refusal.description,
        ...refusal.context,
        ...(items.length === 0 ? {} : { items: items.slice(0, LOGGED_ITEMS_MAX) }),
        ...(items.length > LOGGED_ITEMS_MAX
          ? { items_not_logged: items.length - LOGGED_ITEMS_MAX }
          : {}),
      },
      'access request refused',
    );
  }
}

/** The refusal an error stands for, naming the refused rows of the (untrusted) body. */
function refusalOf(error: AppError, body: unknown): Refusal {
  const problems: (FieldProblem & { reason?: RefusalReason })[] =
    error instanceof EntitlementsRefusedError
      ? error.refused
      : error instanceof ValidationFailedError
        ? error.errors
        : [];
  const items = problems.map((problem): LoggedItem => {
    const row = problem.index === undefined ? undefined : rowAt(body, problem.index);
    return {
      ...(problem.index === undefined ? {} : { index: problem.index }),
      ...row,
      ...(problem.field === undefined ? {} : { field: problem.field }),
      reason: problem.reason ?? 'invalid_request',
      message: problem.message,
    };
  });
  const reasons =
    items.length > 0 ? items.map((item) => item.reason) : ['invalid_request' as const];
  return { reasons, status: error.status, description: error.description, items };
}

/** The entitlement key of a body row, as far as it is readable. */
function rowAt(
  body: unknown,
  index: number,
): Pick<LoggedItem, 'application' | 'resource' | 'user'> {
  const row: unknown = Array.isArray(body) ? body[index] : undefined;
  if (typeof row !== 'object' || row === null) return {};
  const { application, resource, user } = row as Record<string, unknown>;
  return { application: quoted(application), resource: quoted(resource), user: quoted(user) };
}

function quoted(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (typeof value === 'string') return value.slice(0, LOGGED_VALUE_MAX);
  return value === undefined ? undefined : `<${Array.isArray(value) ? 'array' : typeof value}>`;
}
