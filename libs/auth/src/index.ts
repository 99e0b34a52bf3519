export * from './principal';
export * from './credentials';
export * from './key-hashing';
export * from './ip-allow-list';
export * from './client-ip';
export * from './auth.decorators';
export { ApiKeyGuard } from './api-key.guard';
export { AuthModule } from './auth.module';
export type { AuthModuleOptions } from './auth.module';
export { AuthFailureLimiter } from './throttle/auth-failure-limiter';
export type { AuthThrottleOptions } from './throttle/auth-failure-limiter';
export * from './throttle/auth-failure-store';
export * from './throttle/throttle-key';
export {
  authFailuresTableSql,
  PostgresAuthFailuresRepository,
} from './throttle/postgres-auth-failures.repository';
export type { SqlRunner } from './throttle/postgres-auth-failures.repository';
export { RedisAuthFailuresStore } from './throttle/redis-auth-failures-store';
export * from './query-key';
export { ASYMMETRIC_JWS_ALGORITHMS } from './jws-algorithms';
export * from './ga4gh-visa';
