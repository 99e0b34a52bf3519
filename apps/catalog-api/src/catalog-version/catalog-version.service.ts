import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/**
 * The catalog's data version: a number every write increases. Table triggers bump it on every
 * statement that changes catalog data (see the migration), so writers cannot forget; `bump()`
 * exists for changes that touch no catalog table but must still invalidate cached responses.
 * Read it inside the same transaction as the data it labels.
 */
@Injectable()
export class CatalogVersionService {
  constructor(private readonly dataSource: DataSource) {}

  async current(manager: EntityManager = this.dataSource.manager): Promise<string> {
    const rows = await manager.query<{ version: string }[]>(
      'SELECT version FROM catalog_version WHERE id = 1',
    );
    return rows[0]?.version ?? '0';
  }

  /** Call inside the writing transaction, so readers never see new data under an old version. */
  async bump(manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.query('UPDATE catalog_version SET version = version + 1 WHERE id = 1');
  }
}
