import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeyGuard } from './api-key.guard';
import { API_KEY_RESOLVER, ApiKeyResolver, AUTH_OPTIONS, AuthOptions } from './principal';
import { AuthFailureLimiter, AuthThrottleOptions } from './throttle/auth-failure-limiter';
import { AUTH_FAILURE_STORE, AuthFailureStore } from './throttle/auth-failure-store';

export interface AuthModuleOptions {
  /** The app's key resolver; it may inject anything its module imports. */
  resolver: Type<ApiKeyResolver>;
  imports?: DynamicModule['imports'];
  providers?: Provider[];
  options?: Partial<AuthOptions>;
  /**
   * Throttling of failed authentications per client; `providers` must then provide the shared
   * AUTH_FAILURE_STORE. Without it (or with `maxFailures` 0) nothing is throttled.
   */
  throttle?: AuthThrottleOptions;
}

/** Installs the default-deny guard globally with the app's own way of resolving keys. */
@Module({})
export class AuthModule {
  static forRoot(config: AuthModuleOptions): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      imports: config.imports ?? [],
      providers: [
        ...(config.providers ?? []),
        config.resolver,
        { provide: API_KEY_RESOLVER, useExisting: config.resolver },
        {
          provide: AUTH_OPTIONS,
          useValue: {
            writeDeniedMessage: 'Write operations require the global API key',
            ...config.options,
          },
        },
        {
          provide: AuthFailureLimiter,
          useFactory: (store?: AuthFailureStore) =>
            config.throttle && store
              ? new AuthFailureLimiter(store, config.throttle)
              : AuthFailureLimiter.disabled(),
          inject: [{ token: AUTH_FAILURE_STORE, optional: true }],
        },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
      ],
      exports: [API_KEY_RESOLVER, AUTH_OPTIONS, AuthFailureLimiter],
    };
  }
}
