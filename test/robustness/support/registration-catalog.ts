import type { AddressInfo } from 'node:net';
import { generateApiKey, hashApiKey } from '@app/auth';
import {
  startDemoCatalog,
  type DemoCatalog,
} from '../../../apps/catalog-api/test/demo-catalog.fixture';

/** The demo catalog's project the fault tests' submissions belong to (registrations need one). */
export const CATALOG_PROJECT = 'PD-OMICS';

export interface RegistrationCatalog {
  /** The provisioner's settings that register every import in this catalog. */
  env: Record<string, string>;
  /** Storage locations recorded for each import path ending in one of `paths`, by path. */
  registrations(paths: string[]): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/**
 * The real catalog (on a database of its own, the demo catalog loaded) listening on loopback,
 * with a registration key for the provisioner: what "registered once" is counted against.
 */
export async function startRegistrationCatalog(): Promise<RegistrationCatalog> {
  const key = generateApiKey(48);
  const catalog: DemoCatalog = await startDemoCatalog({
    REGISTRATION_API_KEY_SHA256: hashApiKey(key),
  });
  await catalog.app.listen(0, '127.0.0.1');
  const port = (catalog.app.getHttpServer().address() as AddressInfo).port;
  return {
    env: {
      CATALOG_URL: `http://127.0.0.1:${port}`,
      CATALOG_API_KEY: key,
      CATALOG_RETRY_DELAY_MS: '200',
      CATALOG_MAX_ATTEMPTS: '20',
    },
    async registrations(paths) {
      const rows = await catalog.dataSource.query<{ location: string; n: number }[]>(
        'SELECT location, count(*)::int AS n FROM storage_locations GROUP BY location',
      );
      const found = new Map<string, number>();
      for (const path of paths)
        found.set(
          path,
          rows.filter((row) => row.location?.endsWith(path)).reduce((sum, row) => sum + row.n, 0),
        );
      return found;
    },
    close: () => catalog.close(),
  };
}
