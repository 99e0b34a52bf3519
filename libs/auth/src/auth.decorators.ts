import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Principal } from './principal';

export const IS_PUBLIC = 'auth:public';
export const OPTIONAL_AUTH = 'auth:optional';
export const REQUIRED_KINDS = 'auth:kinds';
export const ALLOW_BEARER = 'auth:bearer';
export const ROUTE_SCOPE = 'auth:scope';

/** Open to anyone; no key is read. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/** Open to anyone, but a key that is sent must be valid (401 otherwise) and is made available. */
export const OptionalAuth = (): MethodDecorator & ClassDecorator =>
  SetMetadata(OPTIONAL_AUTH, true);

/** Only principals of these kinds pass; any other valid principal gets 403. */
export const RequireKinds = (...kinds: string[]): MethodDecorator & ClassDecorator =>
  SetMetadata(REQUIRED_KINDS, kinds);

/** Also accept an `Authorization: Bearer` token (resolved by the app's BearerTokenResolver). */
export const AllowBearer = (): MethodDecorator & ClassDecorator => SetMetadata(ALLOW_BEARER, true);

/** The one scope whose principals (besides unscoped ones) may call the route. */
export const ScopedRoute = (scope: string): MethodDecorator & ClassDecorator =>
  SetMetadata(ROUTE_SCOPE, scope);

export interface RequestWithPrincipal {
  principal?: Principal;
}

/** The authenticated principal of the request (undefined on public routes without a key). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Principal | undefined =>
    ctx.switchToHttp().getRequest<RequestWithPrincipal>().principal,
);
