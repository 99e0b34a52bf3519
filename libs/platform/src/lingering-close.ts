import type { NextFunction, Request, Response } from 'express';

/** Longest a response waits, once written, for the rest of a body nobody read. */
export const LINGER_MS = 10_000;

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

type End = Response['end'];

/**
 * Bodies are read only on routes that get past their guards, so many answers (401, 404, the
 * API documents, the dashboard's files) are written while the client is still sending a body.
 * Closing the connection then, with that body unread, makes the kernel reset it, and the
 * client loses the answer it was about to read. So, as nginx's lingering close does: the answer
 * is written at once, the rest of the body is discarded (never buffered, inflated or parsed),
 * and the response ends, and the connection may close, once the body has arrived or after
 * LINGER_MS.
 */
export function lingeringClose(req: Request, res: Response, next: NextFunction): void {
  if (!hasBody(req)) return next();
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    // eslint-disable-next-line no-restricted-syntax -- res.end's own arguments (at most three)
    if (req.complete || req.destroyed || res.writableEnded) return end(...args);
    const callback = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
    if (args.length > 0 && args[0] !== undefined && args[0] !== null) {
      res.write(args[0] as Buffer | string, (args[1] ?? 'utf8') as BufferEncoding);
    }
    const finish = () => {
      clearTimeout(timer);
      if (!res.writableEnded) end(callback);
    };
    const timer = setTimeout(finish, LINGER_MS);
    timer.unref();
    req.once('end', finish);
    req.once('close', finish);
    req.once('error', finish);
    req.resume();
    return res;
  }) as End;
  next();
}
