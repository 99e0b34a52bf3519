// Imported first by the entry point: OpenTelemetry, when the OTEL_* settings ask for it, must be
// in place before the libraries it instruments load (libs/platform/src/telemetry).
import { startTelemetry } from '@app/platform/telemetry';

startTelemetry('provisioner-api');
