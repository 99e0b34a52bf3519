import { KEYS } from '../../../apps/catalog-api/test/demo-catalog.fixture';
import { AppProcess, freePort, startAppProcess } from '../../support/app-process';
import { until } from '../../support/wait';

export interface CatalogProcess {
  app: AppProcess;
  port: number;
  url: string;
}

/**
 * The catalog as its own process on `databaseUrl` (migrated already), with the demo's global key
 * and `env` over the defaults, run with `nodeArgs` (the deployment's heap flags); resolves once
 * it is ready.
 */
export async function startCatalogProcess(
  databaseUrl: string,
  env: Record<string, string>,
  nodeArgs: string[],
): Promise<CatalogProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const app = startAppProcess(
    'catalog-api',
    'src/main',
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      MIGRATIONS_RUN: 'false',
      GLOBAL_API_KEY: KEYS.global,
      LOG_LEVEL: 'error',
      ...env,
    },
    nodeArgs,
  );
  await until(
    () =>
      fetch(`${url}/health/ready`).then(
        (res) => res.ok,
        () => false,
      ),
    'the catalog to be ready',
    60_000,
    100,
  );
  return { app, port, url };
}
