import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  Res,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { CACHED_READ, CachedReadOptions, snapshotOf } from './cached-read.options';
import { ReadCacheInterceptor } from './read-cache.interceptor';

/**
 * A GET whose JSON answer the read cache serves and stores (read-cache/README.md). The handler
 * returns its value; the interceptor sends it with its ETag and cache headers, or 304.
 *
 * The read cache writes the response itself (the cached bytes as they are, or a 304), so Nest
 * must not send the returned value again: Nest only leaves the response to a handler that
 * takes the response object, hence one extra, unused parameter bound to it here.
 */
export function CachedRead(options: CachedReadOptions = {}): MethodDecorator {
  return applyDecorators(
    SetMetadata(CACHED_READ, options),
    UseInterceptors(ReadCacheInterceptor),
    (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
      const declared = (descriptor.value as (...args: unknown[]) => unknown).length;
      const types = Reflect.getMetadata('design:paramtypes', target, key) as unknown[] | undefined;
      Res()(target, key, Math.max(declared, types?.length ?? 0));
    },
  );
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
