import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ForbiddenError, UnauthorizedError } from '@app/errors';
import {
  ALLOW_BEARER,
  IS_PUBLIC,
  OPTIONAL_AUTH,
  REQUIRED_KINDS,
  RequestWithPrincipal,
  ROUTE_SCOPE,
} from './auth.decorators';
import { extractApiKey, extractBearerToken } from './credentials';
import {
  API_KEY_RESOLVER,
  AUTH_OPTIONS,
  BEARER_TOKEN_RESOLVER,
  DEFAULT_AUTH_OPTIONS,
} from './principal';
import type { ApiKeyResolver, AuthOptions, BearerTokenResolver, Principal } from './principal';
import { AuthFailureLimiter } from './throttle/auth-failure-limiter';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The one global guard. Default-deny: a route is open only when marked @Public() or
 * @OptionalAuth(). Checks run in the contract's order: no credentials → 401, unknown
 * credentials → 401, a scoped principal off its routes → 403, a read-only principal on a write
 * → 403, a kind the route excludes → 403.
 * Credentials are resolved under the failure limiter: a client that guessed too often gets 429.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(API_KEY_RESOLVER) private readonly keys: ApiKeyResolver,
    @Optional() @Inject(BEARER_TOKEN_RESOLVER) private readonly bearer?: BearerTokenResolver,
    @Optional() @Inject(AUTH_OPTIONS) private readonly options: AuthOptions = DEFAULT_AUTH_OPTIONS,
    @Optional() private readonly limiter: AuthFailureLimiter = AuthFailureLimiter.disabled(),
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;

    const req = context.switchToHttp().getRequest<Request & RequestWithPrincipal>();
    const optional = this.reflector.getAllAndOverride<boolean>(OPTIONAL_AUTH, targets) ?? false;
    const allowBearer = this.reflector.getAllAndOverride<boolean>(ALLOW_BEARER, targets) ?? false;

    const principal = await this.authenticate(req, allowBearer);
    if (principal === undefined) {
      if (optional) return true;
      throw new UnauthorizedError('API key required');
    }
    if (principal === null) throw new UnauthorizedError('Invalid API key');

    if (
      principal.scope !== undefined &&
      this.reflector.getAllAndOverride<string>(ROUTE_SCOPE, targets) !== principal.scope
    ) {
      throw new ForbiddenError(`This key may only be used for ${principal.scope}`);
    }
    if (!READ_METHODS.has(req.method) && !principal.canWrite) {
      throw new ForbiddenError(this.options.writeDeniedMessage);
    }
    const kinds = this.reflector.getAllAndOverride<string[] | undefined>(REQUIRED_KINDS, targets);
    if (kinds && !kinds.includes(principal.kind)) {
      throw new ForbiddenError(`This operation requires a ${kinds.join(' or ')} key`);
    }
    req.principal = principal;
    return true;
  }

  /** undefined: no credentials sent; null: credentials sent but not valid. */
  private async authenticate(
    req: Request,
    allowBearer: boolean,
  ): Promise<Principal | null | undefined> {
    const apiKey = extractApiKey(req);
    if (apiKey !== undefined) {
      const principal = await this.limiter.attempt(req, () => this.keys.resolve(apiKey));
      const login =
        allowBearer && principal?.vouchesForLogins ? extractBearerToken(req) : undefined;
      if (login === undefined || this.bearer === undefined) return principal;
      // A caller's login, forwarded by the service that holds the key: its failure is the
      // caller's (answered 401), never a guess from the service's address.
      return (await this.bearer.resolve(login)) ?? null;
    }
    const bearer = allowBearer ? this.bearer : undefined;
    const token = bearer && extractBearerToken(req);
    if (bearer && token !== undefined)
      return this.limiter.attempt(req, () => bearer.resolve(token));
    return undefined;
  }
}
