export * from './app-error';
export * from './http-errors';
export { AllExceptionsFilter } from './all-exceptions.filter';
export { RequestValidationPipe, toFieldProblems, validateInput } from './validation.pipe';
export { isDependencyUnavailable } from './dependency-errors';
export { fromBodyParserError } from './body-parser-errors';
export { fromDatabaseConflict, fromDatabaseInputError } from './database-input-errors';
export { isDatabaseError, logSafeError, logSafeMessage } from './log-safe-error';
export { CappedProblems, MAX_REPORTED_PROBLEMS } from './capped-problems';
