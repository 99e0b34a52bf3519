import { Catch, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { redactPathTokens } from '@app/auth';
import { AllExceptionsFilter, type AppError } from '@app/errors';
import { TrailEmitter } from '../trail/trail-emitter';
import { ACCESS_URL_TOKENS } from './access-urls';

/** What a DRS request is known to be about, noted on it as soon as known (for the audit). */
interface NotedRequest extends Request {
  drsSubject?: string;
  drsObject?: string;
}

/** Notes the subject (and, for an access URL, the object) on the request for the audit. */
export function noteDrsRequest(req: Request, facts: { subject: string; object?: string }): void {
  const noted = req as NotedRequest;
  noted.drsSubject = facts.subject;
  if (facts.object !== undefined) noted.drsObject = facts.object;
}

/**
 * The errors of the DRS routes: the one filter's envelope with DRS 1.5's `msg` and
 * `status_code` beside it, and every refusal (4xx) audited, one structured log line each:
 * what was asked, by whom (the subject once known), from where, and why it was refused. The
 * access refusals (401, 403) are also the trail's `drs_object.refuse` events, emitted here
 * once; a malformed, unknown or oversized request (400, 404, 413, 416) decides no access and
 * stays in the log only (docs/decisions/provisioner-trail-outbox.md).
 */
@Catch()
export class DrsErrorsFilter extends AllExceptionsFilter {
  private readonly audit = new Logger('DrsAudit');

  constructor(private readonly trail: TrailEmitter) {
    super();
  }

  protected override bodyOf(error: AppError, req: Request): object {
    if (error.status >= 400 && error.status < 500) {
      const noted = req as NotedRequest;
      // The path names the object; the query, the body and an access URL's token
      // (credentials) are never logged.
      const path = redactPathTokens(req.path, ACCESS_URL_TOKENS).slice(0, 1024);
      this.audit.warn(
        {
          audit: 'drs_refusal',
          status: error.status,
          reason: error.code,
          method: req.method,
          path,
          subject: noted.drsSubject,
          client: req.ip,
        },
        'DRS request refused',
      );
      if (error.status === 401 || error.status === 403) {
        const objectId = noted.drsObject ?? (req.params as { object_id?: string }).object_id;
        const accession = (error.more as { accession?: unknown } | undefined)?.accession;
        void this.trail.emit({
          type: 'drs_object.refuse',
          // A request naming no one object (a bulk request refused whole): its path.
          object_id: objectId ?? path,
          subject: noted.drsSubject,
          dataset: typeof accession === 'string' ? accession : undefined,
          reason: `${error.code}: ${error.description}`,
        });
      }
    }
    return { ...error.toEnvelope(), msg: error.description, status_code: error.status };
  }
}
