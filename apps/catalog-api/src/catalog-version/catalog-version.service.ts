import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/**
 * The catalog's data version: a number every write increases. Table triggers bump it on every
 * statement that changes catalog data, and announce it with NOTIFY (see the migrations), so
 * writers cannot forget. Read it inside the same transaction as the data it labels.
 */
/** The one statement that reads the version (also run on the tracker's own connection). */
export const CURRENT_VERSION_SQL = 'SELECT version FROM catalog_version WHERE id = 1';

@Injectable()
export class CatalogVersionService {
  constructor(private readonly dataSource: DataSource) {}

  async current(manager: EntityManager = this.dataSource.manager): Promise<string> {
    const rows = await manager.query<{ version: string }[]>(CURRENT_VERSION_SQL);
    return rows[0]?.version ?? '0';
  }
}
