import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { CACHED_READ, CachedReadOptions, snapshotOf } from './cached-read-options';
import { ReadCacheInterceptor } from './read-cache.interceptor';

/**
 * A GET whose JSON answer the read cache serves and stores (read-cache/README.md). The handler
 * returns its value; the interceptor returns the cached bytes in its place, with its ETag and
 * cache headers, or an empty 304.
 */
export function CachedRead(options: CachedReadOptions = {}): MethodDecorator {
  return applyDecorators(SetMetadata(CACHED_READ, options), UseInterceptors(ReadCacheInterceptor));
}

/**
 * The EntityManager of the read's snapshot (a REPEATABLE READ transaction that also reads the
 * data version the answer is filed under). Only on a route marked @CachedRead().
 */
export const ReadSnapshot = createParamDecorator((_: unknown, ctx: ExecutionContext) => {
  const manager = snapshotOf(ctx.switchToHttp().getRequest<object>());
  if (manager === undefined) throw new Error('@ReadSnapshot() is for routes marked @CachedRead()');
  return manager;
});
