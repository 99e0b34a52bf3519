import { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import type { Request, RequestHandler, Response } from 'express';
import { from, Observable, switchMap } from 'rxjs';

/** Runs Express middleware one after the other; rejects with the first error one passes on. */
function runSteps(steps: RequestHandler[], req: Request, res: Response): Promise<void> {
  return steps.reduce<Promise<void>>(
    (previous, step) =>
      previous.then(
        () =>
          new Promise<void>((resolve, reject) => {
            void step(req, res, (error?: unknown) =>
              error === undefined ? resolve() : reject(error),
            );
          }),
      ),
    Promise.resolve(),
  );
}

/**
 * Reads the request body (content-type check, inflation, size limit, parsing) as the first
 * interceptor, that is after routing and after every guard. A request the guards refuse (no
 * key, a wrong key, a throttled address) is answered without its body being inflated or parsed:
 * Node discards the unread bytes, so a small gzip body that inflates to the size limit costs
 * nothing until the caller has shown a valid key.
 */
export class BodyParsingInterceptor implements NestInterceptor {
  constructor(private readonly steps: RequestHandler[]) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const parsed = runSteps(this.steps, http.getRequest<Request>(), http.getResponse<Response>());
    return from(parsed).pipe(switchMap(() => next.handle()));
  }
}
