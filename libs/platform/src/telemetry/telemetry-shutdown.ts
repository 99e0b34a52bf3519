import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { stopTelemetry } from './index';

/** Sends the spans still buffered when the app closes (nothing to do while telemetry is off). */
@Injectable()
export class TelemetryShutdown implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return stopTelemetry();
  }
}
