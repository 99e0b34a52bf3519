import type { Telemetry } from 'bullmq';
import { BullMQOtel } from 'bullmq-otel';
import { telemetryEnabled } from '@app/platform/telemetry';

/**
 * BullMQ's own telemetry (taskforcesh/bullmq-otel) while OpenTelemetry runs, else nothing: a
 * job added inside a trace carries its context in the job, and the worker that runs it continues
 * that trace, so one import is one trace from the API's request to the catalog's registration.
 */
export function queueTelemetry(): Telemetry | undefined {
  return telemetryEnabled() ? new BullMQOtel({ tracerName: 'bullmq' }) : undefined;
}
