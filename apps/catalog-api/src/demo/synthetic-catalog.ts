import type { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '@app/auth';
import { ENDPOINT_KEY_LENGTH } from '../auth/catalog-key.resolver';
import { SyntheticCatalogRepository } from './synthetic-catalog.repository';

export interface SyntheticCatalogOptions {
  datasets: number;
}

/** The endpoint the synthetic datasets are exposed to; its key is random, made per run. */
export const SYNTHETIC_ENDPOINT = 'Synthetic benchmark catalog';

/**
 * Appends a large synthetic catalog with set-based INSERT ... SELECT statements (no per-row
 * round trips): per dataset two declarations with a use condition each, two custodians, two
 * storage locations, a legal basis and an exposure; one project per 10 datasets. Names carry a
 * run tag so repeated runs add rather than collide.
 */
export async function generateSyntheticCatalog(
  dataSource: DataSource,
  options: SyntheticCatalogOptions,
): Promise<{ tag: string; endpointKey: string }> {
  const tag = `syn-${Date.now().toString(36)}`;
  const endpointKey = generateApiKey(ENDPOINT_KEY_LENGTH);
  await dataSource.transaction(async (m) => {
    await new SyntheticCatalogRepository().append(
      m,
      tag,
      options.datasets,
      `${SYNTHETIC_ENDPOINT} ${tag}`,
      hashApiKey(endpointKey),
    );
  });
  return { tag, endpointKey };
}
