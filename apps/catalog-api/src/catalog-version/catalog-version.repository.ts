import { Injectable } from '@nestjs/common';
import type { Client } from 'pg';
import { DataSource, EntityManager } from 'typeorm';

/** The channel the bump trigger NOTIFYs on (see the migrations). */
export const CATALOG_VERSION_CHANNEL = 'catalog_version';

/** The one statement that reads the version, on a pooled or on the listener's connection. */
const CURRENT_VERSION_SQL = 'SELECT version FROM catalog_version WHERE id = 1';

/**
 * The catalog's data version: a number every write increases. Table triggers bump it on every
 * statement that changes catalog data, and announce it with NOTIFY (see the migrations), so
 * writers cannot forget. Read it inside the same transaction as the data it labels.
 */
@Injectable()
export class CatalogVersionRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The version, read with `manager` (a transaction's, to label the data it reads). */
  async current(manager: EntityManager = this.dataSource.manager): Promise<string> {
    const rows = await manager.query<{ version: string }[]>(CURRENT_VERSION_SQL);
    return rows[0]?.version ?? '0';
  }

  /** Subscribes a dedicated connection (the tracker's) to the version's notifications. */
  async listen(client: Client): Promise<void> {
    await client.query(`LISTEN ${CATALOG_VERSION_CHANNEL}`);
  }

  /** Subscribes the tracker's connection to another channel (see CatalogVersionTracker.watch). */
  async listenOn(client: Client, channel: string): Promise<void> {
    if (!/^[a-z_]+$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    await client.query(`LISTEN ${channel}`);
  }

  /** The version read on a dedicated connection: the listener's heartbeat. */
  async currentOn(client: Client): Promise<string> {
    const result = await client.query<{ version: string }>(CURRENT_VERSION_SQL);
    return result.rows[0]?.version ?? '0';
  }
}
