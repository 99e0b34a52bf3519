export * from './settings';
export { FrontDoorSettings } from './front-door.settings';
export {
  assignRequestId,
  LOG_LEVELS,
  LoggingModule,
  logRequestCompleted,
  requestId,
  redactUrl,
  REQUEST_ID_HEADER,
} from './logging.module';
export type { LoggingOptions } from './logging.module';
export { configureHttpApp, createHttpAdapter } from './http-app';
export type { HttpAppOptions } from './http-app';
export { answeredWithin } from './answered-within';
export { HealthModule, HEALTH_CHECKS, HealthController } from './health.module';
export type { HealthCheck } from './health.module';
export { runMain, StartRefused } from './run-main';
export { assertKeepsSessions, PostgresSessionRepository } from './postgres-session.repository';
export { PooledTransactionRepository } from './pooled-transaction.repository';
export { listenUntilSignalled, trackForDrain } from './graceful-shutdown';
export { exitOnStopSignals } from './stop-signals';
export { processIsAlive } from './process-alive';
export * from './metrics';
export * from './openapi';
export {
  CALENDAR_DATE_PATTERN,
  isCalendarDate,
  parseDateOrTimestamp,
  parseTimestamp,
  TIMESTAMP_PATTERN,
} from './dates';
export { decodeUtf8 } from './utf8-body';
export * from './input';
export { answersHelp, userDirectory } from './cli-help';
export {
  assertJsonLimits,
  DEFAULT_MAX_JSON_DEPTH,
  DEFAULT_MAX_JSON_OBJECTS,
  jsonLimitPassed,
} from './json-depth';
export type { JsonLimits } from './json-depth';
export { forEachTimeSliced, mapTimeSliced, TimeSlice } from './time-sliced';
export { admitStreamedAnswer, SlowReaders, weighStreamedAnswer } from './slow-readers';
export type { SlowReaderBounds } from './slow-readers';
