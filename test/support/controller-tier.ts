import type { DynamicModule, ForwardReference, Provider, Type } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { AuthModule, BEARER_TOKEN_RESOLVER } from '@app/auth';
import { HealthModule, MetricsModule } from '@app/platform';
import type { ApiKeyResolver, BearerTokenResolver, Principal } from '@app/auth';
import { listRoutes } from '../robustness/support/routes';
import { createTinyHttpApp } from './tiny-http-app';

type ModuleRef = Type | DynamicModule | Promise<DynamicModule> | ForwardReference;

/**
 * Every controller an app module registers, through all the modules it imports, except those of
 * the `except` modules (the libraries' own, tested at the library).
 */
export function controllersOf(root: DynamicModule, except: Type[] = []): Type[] {
  const found = new Set<Type>();
  const seen = new Set<unknown>();
  const visit = (entry: ModuleRef | undefined): void => {
    if (!entry || entry instanceof Promise || seen.has(entry)) return;
    seen.add(entry);
    if ('forwardRef' in entry) return visit(entry.forwardRef() as ModuleRef);
    const dynamic = 'module' in entry ? entry : undefined;
    const type = dynamic ? dynamic.module : (entry as Type);
    if (except.includes(type)) return;
    const metadata = (key: string): unknown[] =>
      (Reflect.getMetadata(key, type) as unknown[] | undefined) ?? [];
    for (const controller of [
      ...metadata(MODULE_METADATA.CONTROLLERS),
      ...(dynamic?.controllers ?? []),
    ])
      found.add(controller as Type);
    for (const child of [...metadata(MODULE_METADATA.IMPORTS), ...(dynamic?.imports ?? [])])
      visit(child as ModuleRef);
  };
  visit(root);
  return [...found];
}

/** Nest asks every provider for these; a stub must not pretend to have them. */
const NOT_STUBBED = new Set([
  'then',
  'constructor',
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/**
 * A stand-in for a service or repository: any method called on it throws (the request ends in
 * a 500), so a refusal the tier expects can only come from guards and validation.
 */
export function failingStub(token: unknown): unknown {
  const name = typeof token === 'function' ? token.name : String(token);
  return new Proxy(
    {},
    {
      get: (_target, property) => {
        if (typeof property === 'symbol' || NOT_STUBBED.has(property)) return undefined;
        return () => {
          throw new Error(`${name}.${property} called: the controller tier has no services`);
        };
      },
    },
  );
}

export interface ControllerTierKeys {
  /** API key → who it is. */
  apiKeys: Record<string, Principal>;
  /** Bearer token → who it is (routes marked @AllowBearer()). */
  bearerTokens?: Record<string, Principal>;
  /** The app's 403 sentence for a read-only key on a write. */
  writeDeniedMessage?: string;
}

export interface ControllerTier extends ControllerTierKeys {
  /** The app module whose controllers are tested. */
  appModule: DynamicModule;
  /** Real modules the controllers and guards read at construction (the app's settings). */
  imports?: DynamicModule[];
  /** Path parameters for the requests, by name (others are `1`). */
  samples?: Record<string, string>;
  /** Stand-ins that let a request reach the handler's validation (instead of failing stubs). */
  providers?: Provider[];
}

export interface ControllerTierApp {
  app: NestExpressApplication;
  /** Every route of the app's controllers. */
  routes: TierRoute[];
  /** What the guard made of a request with these headers on every route (see guardVerdicts). */
  verdicts(headers: Record<string, string>): Promise<Record<string, string>>;
  /** The verdict the test expects on every route, in the same form. */
  expected(verdict: (route: string) => string): Record<string, string>;
}

/**
 * The app's controllers behind the real global guard (with these keys instead of the app's
 * database or settings) and the real validation pipe and error envelope, every other
 * dependency a failing stub: guards and parameter validation per route, in milliseconds. The
 * libraries' controllers (health, metrics) are left to the libraries' own specs.
 */
export async function createControllerTierApp(tier: ControllerTier): Promise<ControllerTierApp> {
  @Injectable()
  class TierKeys implements ApiKeyResolver {
    resolve(apiKey: string): Promise<Principal | null> {
      return Promise.resolve(tier.apiKeys[apiKey] ?? null);
    }
  }
  const bearer: BearerTokenResolver = {
    resolve: (token) => Promise.resolve(tier.bearerTokens?.[token] ?? null),
  };
  const options = tier.writeDeniedMessage ? { writeDeniedMessage: tier.writeDeniedMessage } : {};
  const app = await createTinyHttpApp(
    {
      imports: [
        ...(tier.imports ?? []),
        AuthModule.forRoot({
          resolver: TierKeys,
          providers: [{ provide: BEARER_TOKEN_RESOLVER, useValue: bearer }],
          options,
        }),
      ],
      controllers: controllersOf(tier.appModule, [HealthModule, MetricsModule]),
      providers: tier.providers ?? [],
    },
    {},
    failingStub,
  );
  const routes = tierRoutes(app, tier.samples);
  return {
    app,
    routes,
    verdicts: (headers) => guardVerdicts(app, routes, headers),
    expected: (verdict) => Object.fromEntries(routes.map(({ route }) => [route, verdict(route)])),
  };
}

/** A route of the app, `METHOD /express/:path`, and the request that exercises it. */
export interface TierRoute {
  route: string;
  method: string;
  path: string;
}

/** Every route of the app, its path parameters filled in from `samples` (else `1`). */
export function tierRoutes(
  app: NestExpressApplication,
  samples: Record<string, string> = {},
): TierRoute[] {
  return listRoutes(app).map(({ method, path }) => ({
    route: `${method} ${path}`,
    method,
    path: path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => samples[name] ?? '1'),
  }));
}

/**
 * What the guard made of a request on every route: `401 <description>` or `403 <description>`
 * when it refused, `passes` when the handler ran (whatever the stubs then made of it).
 */
export async function guardVerdicts(
  app: NestExpressApplication,
  routes: TierRoute[],
  headers: Record<string, string>,
): Promise<Record<string, string>> {
  const verdicts: Record<string, string> = {};
  for (const { route, method, path } of routes) {
    const res = await new request.Test(app.getHttpServer(), method.toLowerCase(), path).set(
      headers,
    );
    verdicts[route] =
      res.status === 401 || res.status === 403
        ? `${res.status} ${(res.body as { description?: string }).description}`
        : 'passes';
  }
  return verdicts;
}

/**
 * A refusal in the error envelope: the status, and the query/path parameters and body fields
 * `more.errors` names (once each).
 */
export function refusal(res: request.Response): { status: number; parameters: string[] } {
  expect(res.headers['x-request-id']).toBeDefined();
  expect(res.body).toEqual({
    status: 'Error',
    description: expect.any(String),
    more: expect.any(Object),
  });
  const errors =
    (res.body as { more: { errors?: { parameter?: string; field?: string }[] } }).more.errors ?? [];
  const named = errors.map((e) => e.parameter ?? e.field);
  return { status: res.status, parameters: [...new Set(named)].sort() as string[] };
}
