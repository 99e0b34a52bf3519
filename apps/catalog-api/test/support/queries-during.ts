import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';

/**
 * Counts the statements the app's database layer (TypeORM's query runners: every pooled query)
 * runs during `work`; the version listener's own connection is not one of them.
 */
export async function queriesDuring(work: () => Promise<unknown>): Promise<number> {
  const spy = jest.spyOn(PostgresQueryRunner.prototype, 'query');
  try {
    await work();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}
