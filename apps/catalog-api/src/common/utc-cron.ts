import type { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';

/**
 * Registers `onTick` under `name` on the cron expression of a setting, in UTC, unless the
 * setting is `off` (what the cron settings' validator allows besides an expression). The
 * scheduled jobs share this convention, so it lives in one place.
 */
export function scheduleUtcCron(
  registry: SchedulerRegistry,
  name: string,
  setting: string,
  onTick: () => Promise<void>,
): void {
  const cronTime = setting.trim();
  if (cronTime === 'off') return;
  registry.addCronJob(name, CronJob.from({ cronTime, timeZone: 'UTC', start: true, onTick }));
}
