import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { catchError, Observable, throwError } from 'rxjs';
import { ServiceUnavailableError } from '@app/errors';
import { StorageRefusedError, StorageUnavailableError } from './storage-system';

/**
 * Every route that reads storage (listings, diffs, import requests, a record rebuilt from
 * storage) answers a store it cannot use as readiness does: 503 in the envelope, saying why
 * (`more.reason`: `storage_refused` for a refused credential or a missing bucket,
 * `storage_unavailable` for a store that does not answer), never a 500.
 */
@Injectable()
export class StorageErrorsInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) =>
        throwError(() =>
          error instanceof StorageRefusedError || error instanceof StorageUnavailableError
            ? new ServiceUnavailableError(`Storage cannot be used: ${error.message}`, {
                reason: error.code,
              })
            : error,
        ),
      ),
    );
  }
}
