import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { TEST_WRITE_KEY } from '../../../../test/support/provisioner-app';
import type { ImportRecord } from '../../src/imports/import-record';

export const TERMINAL_STATES = ['imported', 'failed', 'rejected'];

/** Polls an import until it ends (or the test's own time-out stops it). */
export async function waitForImport(
  api: NestExpressApplication,
  id: string,
  states = TERMINAL_STATES,
): Promise<ImportRecord> {
  for (;;) {
    const res = await request(api.getHttpServer())
      .get(`/imports/${encodeURIComponent(id)}`)
      .set('X-API-Key', TEST_WRITE_KEY);
    if (res.status === 200 && states.includes((res.body as ImportRecord).state))
      return res.body as ImportRecord;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
