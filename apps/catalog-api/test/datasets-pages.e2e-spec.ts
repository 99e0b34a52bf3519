import type { Pool } from 'pg';
import type { EntityManager, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { DatabaseRepository } from '../src/database/database.repository';
import { DatasetsRepository } from '../src/datasets/datasets.repository';
import { DemoCatalog, startDemoCatalog } from './demo-catalog.fixture';

/**
 * `findExportPages` writes every other page on a second connection that shares the read's
 * snapshot, when the pool has one free. The pages must be those of one connection: the same
 * items, in id order, all from the snapshot the read began with.
 */
describe('datasets read page by page on two connections', () => {
  let c: DemoCatalog;
  let datasets: DatasetsRepository;
  let pool: Pool;
  const busy = () => pool.totalCount - pool.idleCount;

  /** All pages of a global read in one REPEATABLE READ transaction; `before` runs in it first. */
  const read = (pageSize: number, before?: (manager: EntityManager) => Promise<void>) =>
    c.dataSource.transaction('REPEATABLE READ', async (manager) => {
      await before?.(manager);
      const pages: string[][] = [];
      const all = datasets.findExportPages(manager, { kind: 'global' }, {}, 'https://x', pageSize);
      for await (const page of all) pages.push(page.items);
      return pages;
    });

  beforeAll(async () => {
    c = await startDemoCatalog();
    datasets = c.app.get(DatasetsRepository);
    pool = (c.dataSource.driver as PostgresDriver).master as Pool;
    // Enough datasets for several pages of 2 on each connection.
    await c.dataSource.query(
      `INSERT INTO datasets (title) SELECT 'paged ' || g FROM generate_series(1, 11) g`,
    );
  });
  afterAll(() => c.close());

  afterEach(() => jest.restoreAllMocks());

  it('hands over the pages of the snapshot the read began with, in id order', async () => {
    const whole = (await read(1000)).flat();
    const second = jest.spyOn(c.app.get(DatabaseRepository), 'snapshotReader');
    const pages = await read(2, async (manager) => {
      // Committed after the read's snapshot was taken (by its first statement, as the read
      // cache's version query does), before the second connection joins: none of it may show.
      await manager.query('SELECT 1');
      await c.dataSource.query(`UPDATE datasets SET title = title || ' (renamed)'`);
      await c.dataSource.query(`INSERT INTO datasets (title) VALUES ('paged late')`);
    });
    await expect(second.mock.results[0].value).resolves.toBeDefined();
    expect(pages.length).toBeGreaterThan(4);
    expect(pages.slice(0, -1).every((page) => page.length === 2)).toBe(true);
    expect(pages.flat()).toEqual(whole);
    // The second connection's transaction ended and the connection went back to the pool.
    expect(busy()).toBe(0);
  });

  it('reads alone, without waiting, when the pool has no connection free', async () => {
    const whole = (await read(1000)).flat();
    const second = jest.spyOn(c.app.get(DatabaseRepository), 'snapshotReader');
    const held: QueryRunner[] = [];
    try {
      const pages = await read(2, async () => {
        while (pool.idleCount > 0 || pool.totalCount < (pool.options.max ?? 10)) {
          const runner = c.dataSource.createQueryRunner();
          held.push(runner);
          await runner.connect();
        }
      });
      await expect(second.mock.results[0].value).resolves.toBeUndefined();
      expect(pages.flat()).toEqual(whole);
    } finally {
      await Promise.all(held.map((runner) => runner.release()));
    }
  });
});
