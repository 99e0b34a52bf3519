import { DataSource } from 'typeorm';
import { answersHelp, exitOnStopSignals } from '@app/platform';
import { loadCatalogSettings } from '../config/catalog.settings';
import { runMigrationsWithLock } from '../database/migration-runner';
import { buildTypeOrmOptions } from '../typeorm-options';
import { generateSyntheticCatalog } from './synthetic-catalog';

/** `npm run gen-data -- --datasets N`: appends a synthetic catalog for benchmarks. */
function datasetsArgument(argv: string[]): number {
  const at = argv.indexOf('--datasets');
  const value = at === -1 ? '1000' : argv[at + 1];
  if (value === undefined || !/^[1-9][0-9]{0,6}$/.test(value)) {
    throw new Error('--datasets must be a positive integer (at most 9,999,999)');
  }
  return Number(value);
}

const USAGE = `
Usage: npm run gen-data [-- --datasets N]

Migrates the database of DATABASE_URL and appends a synthetic catalog of N datasets (default
1000) for benchmarks, with an endpoint key made for the run.
`;

async function main(): Promise<void> {
  if (answersHelp(USAGE)) return;
  exitOnStopSignals({ message: (signal) => `gen-data: stopped by ${signal} before it finished` });
  const datasets = datasetsArgument(process.argv.slice(2));
  const dataSource = new DataSource(buildTypeOrmOptions(loadCatalogSettings()));
  await dataSource.initialize();
  try {
    await runMigrationsWithLock(dataSource);
    const started = Date.now();
    const { tag, endpointKey } = await generateSyntheticCatalog(dataSource, { datasets });
    console.log(`Generated ${datasets} datasets (tag ${tag}) in ${Date.now() - started} ms.`);
    console.log(`Endpoint key (made for this run) of the synthetic catalog: ${endpointKey}`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
