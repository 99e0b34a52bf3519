import { Catch, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { redactPathTokens } from '@app/auth';
import { AllExceptionsFilter, type AppError } from '@app/errors';
import { ACCESS_URL_TOKENS } from './access-urls';

/**
 * The errors of the DRS routes: the one filter's envelope with DRS 1.5's `msg` and
 * `status_code` beside it, and every refusal (4xx) audited, one structured log line each:
 * what was asked, by whom (the subject once known), from where, and why it was refused.
 */
@Catch()
export class DrsErrorsFilter extends AllExceptionsFilter {
  private readonly audit = new Logger('DrsAudit');

  protected override bodyOf(error: AppError, req: Request): object {
    if (error.status >= 400 && error.status < 500) {
      this.audit.warn(
        {
          audit: 'drs_refusal',
          status: error.status,
          reason: error.code,
          method: req.method,
          // The path names the object; the query, the body and an access URL's token
          // (credentials) are never logged.
          path: redactPathTokens(req.path, ACCESS_URL_TOKENS).slice(0, 1024),
          subject: (req as Request & { drsSubject?: string }).drsSubject,
          client: req.ip,
        },
        'DRS request refused',
      );
    }
    return { ...error.toEnvelope(), msg: error.description, status_code: error.status };
  }
}
