import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './online-ddl';

const BY_DATASET = 'IDX_exposures_dataset';
const WITHDRAWN = 'IDX_exposures_withdrawn';

/**
 * What the DCAT export and the FAIR Data Point read of exposures, found by index: a dataset's
 * exposures, deprecated ones included (the only index by dataset covered active ones, so each
 * batch of 100 datasets scanned the whole table, a cost that grew with the catalog's square),
 * and the latest withdrawal of all (`max(deprecated_at)`, read by every record's lifetime), an
 * index of the withdrawn ones only. Built CONCURRENTLY outside a transaction: the running
 * release writes `exposures`.
 */
export class ExposureReadIndexes1796600000000 implements MigrationInterface {
  name = 'ExposureReadIndexes1796600000000';

  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(queryRunner, BY_DATASET, 'ON "exposures" ("dataset_id")');
    await createIndexConcurrently(
      queryRunner,
      WITHDRAWN,
      'ON "exposures" ("deprecated_at") WHERE "deprecated_at" IS NOT NULL',
    );
  }

  /** A plain DROP: a down migration may run inside a transaction (undoLastMigration's default). */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS "${WITHDRAWN}"`);
    await queryRunner.query(`DROP INDEX IF EXISTS "${BY_DATASET}"`);
  }
}
