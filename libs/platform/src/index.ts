export * from './settings';
export { LoggingModule, requestId, redactUrl, REQUEST_ID_HEADER } from './logging.module';
export type { LoggingOptions } from './logging.module';
export { configureHttpApp } from './http-app';
export type { HttpAppOptions } from './http-app';
export { HealthModule, HEALTH_CHECKS, HealthController } from './health.module';
export type { HealthCheck } from './health.module';
export { runMain } from './run-main';
