// Imported first by the entry point: OpenTelemetry, when the OTEL_* settings ask for it, must be
// in place before the libraries it instruments load (libs/platform/src/telemetry).
import { startTelemetry } from '@app/platform/telemetry';
// Only constants (and node:crypto): nothing an instrumentation patches loads before it.
import { ACCESS_URL_TOKENS } from './drs/access-urls';

startTelemetry('provisioner-api', ACCESS_URL_TOKENS);
