// `npm run bench [-- --only <suite>[,<suite>...]] [--quick] [--no-build] [--scale-sizes <n>,...] [--scale-rounds <n>] [--huge-gib <n>] [--fdp-datasets <n>]`: measures each figure as
// a ratio against a physical limit in the same run and writes docs/benchmarks.md. The suites, in
// the order they run and their sections appear, are SUITES below (`--help` lists them).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { postgresVersion } from './lib/bench-database';
import type { BenchContext } from './lib/context';
import { buildApp, ROOT } from './lib/processes';
import { answersHelp } from '@app/platform';
import { machineDescription, SuiteReport, writeReport } from './lib/report';
import { accessRequestsBench } from './suites/access-requests.bench';
import { catalogBench } from './suites/catalog.bench';
import { catalogScaleBench } from './suites/catalog-scale.bench';
import { catalogReplicasBench } from './suites/catalog-replicas.bench';
import { catalogImportBench } from './suites/catalog-import.bench';
import { dcatBench } from './suites/dcat.bench';
import { diffBench } from './suites/diff.bench';
import { fdpBench } from './suites/fdp.bench';
import { crypt4ghBench } from './suites/crypt4gh.bench';
import { crypt4ghArchiveBench } from './suites/crypt4gh-archive.bench';
import { crypt4ghArchiveS3Bench } from './suites/crypt4gh-archive-s3.bench';
import { drsBench } from './suites/drs.bench';
import { ga4ghVisasBench } from './suites/ga4gh-visas.bench';
import { importsBench } from './suites/imports.bench';
import { s3ImportsBench } from './suites/s3-imports.bench';
import { s3InboxBench } from './suites/s3-inbox.bench';
import { scaleBench } from './suites/scale.bench';
import { scaleS3Bench } from './suites/scale-s3.bench';
import { s3WorkersBench } from './suites/s3-workers.bench';
import { recordsBench } from './suites/records.bench';
import { registrationBench } from './suites/registration.bench';
import { termsBench } from './suites/terms.bench';
import { trailBench } from './suites/trail.bench';

interface Suite {
  name: string;
  needs: ('catalog-api' | 'provisioner')[];
  run(ctx: BenchContext): Promise<SuiteReport>;
}

const SUITES: Suite[] = [
  { name: 'catalog', needs: ['catalog-api'], run: catalogBench },
  { name: 'catalog-scale', needs: ['catalog-api'], run: catalogScaleBench },
  { name: 'catalog-replicas', needs: ['catalog-api'], run: catalogReplicasBench },
  { name: 'terms', needs: ['catalog-api'], run: termsBench },
  { name: 'access-requests', needs: ['catalog-api'], run: accessRequestsBench },
  { name: 'catalog-import', needs: ['catalog-api'], run: catalogImportBench },
  { name: 'dcat', needs: ['catalog-api'], run: dcatBench },
  { name: 'fdp', needs: ['catalog-api'], run: fdpBench },
  { name: 'ga4gh-visas', needs: ['catalog-api'], run: ga4ghVisasBench },
  { name: 'imports', needs: ['provisioner'], run: importsBench },
  { name: 'scale', needs: ['provisioner', 'catalog-api'], run: scaleBench },
  { name: 'scale-s3', needs: ['provisioner'], run: scaleS3Bench },
  { name: 's3-imports', needs: ['provisioner'], run: s3ImportsBench },
  { name: 's3-workers', needs: ['provisioner'], run: s3WorkersBench },
  { name: 's3-inbox', needs: ['provisioner'], run: s3InboxBench },
  { name: 'diff', needs: ['provisioner'], run: diffBench },
  { name: 'records', needs: ['provisioner'], run: recordsBench },
  { name: 'registration', needs: ['catalog-api', 'provisioner'], run: registrationBench },
  { name: 'drs', needs: ['catalog-api', 'provisioner'], run: drsBench },
  { name: 'trail', needs: ['catalog-api', 'provisioner'], run: trailBench },
  { name: 'crypt4gh', needs: [], run: crypt4ghBench },
  { name: 'crypt4gh-archive', needs: ['catalog-api', 'provisioner'], run: crypt4ghArchiveBench },
  { name: 'crypt4gh-archive-s3', needs: ['provisioner'], run: crypt4ghArchiveS3Bench },
];

/** The suites' names in run order: the `--only` values, the help text, the report's sections. */
const SUITE_NAMES = SUITES.map((s) => s.name);

function parseArgs(argv: string[]) {
  let only: string[] | undefined;
  let quick = false;
  let build = true;
  let scaleSizes: number[] | undefined;
  let scaleRounds: number | undefined;
  let hugeGiB: number | undefined;
  let fdpDatasets: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') quick = true;
    else if (arg === '--no-build') build = false;
    else if (arg === '--scale-sizes' || arg.startsWith('--scale-sizes=')) {
      const value = arg.includes('=') ? arg.slice('--scale-sizes='.length) : argv[++i];
      scaleSizes = (value ?? '').split(',').map(Number);
      if (scaleSizes.length === 0 || scaleSizes.some((n) => !Number.isInteger(n) || n < 1)) {
        throw new Error('--scale-sizes takes file counts (comma-separated)');
      }
    } else if (arg === '--scale-rounds' || arg.startsWith('--scale-rounds=')) {
      const value = arg.includes('=') ? arg.slice('--scale-rounds='.length) : argv[++i];
      scaleRounds = Number(value);
      if (!Number.isInteger(scaleRounds) || scaleRounds < 1)
        throw new Error('--scale-rounds takes the number of rounds per size');
    } else if (arg === '--huge-gib' || arg.startsWith('--huge-gib=')) {
      const value = arg.includes('=') ? arg.slice('--huge-gib='.length) : argv[++i];
      hugeGiB = Number(value);
      if (!Number.isFinite(hugeGiB) || hugeGiB <= 0) {
        throw new Error('--huge-gib takes the size of the single-file import case in GiB');
      }
    } else if (arg === '--fdp-datasets' || arg.startsWith('--fdp-datasets=')) {
      const value = arg.includes('=') ? arg.slice('--fdp-datasets='.length) : argv[++i];
      fdpDatasets = Number(value);
      if (!Number.isInteger(fdpDatasets) || fdpDatasets < 1)
        throw new Error('--fdp-datasets takes the number of datasets of the fdp suite');
    } else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg.includes('=') ? arg.slice('--only='.length) : argv[++i];
      only = (value ?? '').split(',').filter(Boolean);
      const unknown = only.filter((name) => !SUITE_NAMES.includes(name));
      if (only.length === 0 || unknown.length > 0) {
        throw new Error(`--only takes ${SUITE_NAMES.join('|')} (comma-separated)`);
      }
    } else throw new Error(`unknown argument ${arg}`);
  }
  return { only, quick, build, scaleSizes, scaleRounds, hugeGiB, fdpDatasets };
}

function redisVersion(): string {
  const out = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return /v=(\S+)/.exec(out.stdout ?? '')?.[1] ?? 'not installed';
}

const HEADER = `# Benchmarks

Written by \`npm run bench\` (\`-- --only ${SUITE_NAMES.join('|')}\`, \`--quick\` for a smoke run).
Every figure is measured side by side with its physical limit in the same run (a bare HTTP server,
\`cp -r\`, \`rsync -a\` and \`rclone copy\` + \`sync\`, \`dd oflag=direct\`, PostgreSQL's COPY), so a busy machine lowers both and the ratio stays meaningful. Each section
says when and on what machine it was measured; sections are replaced one at a time.`;

async function main(): Promise<void> {
  if (
    answersHelp(
      `Usage: npm run bench [-- --only ${SUITE_NAMES.join('|')} (comma-separated)] ` +
        '[--quick] [--no-build] [--scale-sizes <files>,...] [--scale-rounds <n>] [--huge-gib <GiB>] [--fdp-datasets <n>]\n\nBuilds the apps, runs the benchmark suites on private copies ' +
        'of the services and rewrites docs/benchmarks.md section by section. --huge-gib adds to the imports ' +
        'suite one file of that size against `dd oflag=direct` (it needs 2.5 times that size free).',
    )
  )
    return;
  const options = parseArgs(process.argv.slice(2));
  const suites = SUITES.filter((s) => !options.only || options.only.includes(s.name));
  if (options.build) {
    for (const app of new Set(suites.flatMap((s) => s.needs))) buildApp(app);
  }
  mkdirSync(join(ROOT, '.bench'), { recursive: true });
  const tempDir = mkdtempSync(join(ROOT, '.bench', 'run-'));
  const ctx: BenchContext = {
    quick: options.quick,
    scaleSizes: options.scaleSizes,
    scaleRounds: options.scaleRounds,
    hugeGiB: options.hugeGiB,
    fdpDatasets: options.fdpDatasets,
    tempDir,
    log: (message) => process.stdout.write(`[bench] ${message}\n`),
  };
  const machine = machineDescription(await postgresVersion(), redisVersion());
  const reports: SuiteReport[] = [];
  const failures: string[] = [];
  try {
    for (const suite of suites) {
      const started = Date.now();
      ctx.log(`${suite.name}…`);
      try {
        const report = await suite.run(ctx);
        report.markdown = `${report.markdown.trim()}\n\nMachine:\n${machine}\nDuration of this section: ${Math.round((Date.now() - started) / 1000)} s.`;
        reports.push(report);
        ctx.log(
          `${suite.name}: ${report.targetsMet ? 'targets met' : 'TARGET MISSED'} (${Math.round((Date.now() - started) / 1000)} s)`,
        );
      } catch (error) {
        failures.push(suite.name);
        ctx.log(
          `${suite.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
      }
    }
  } finally {
    rmSync(tempDir, { recursive: true, force: true });
  }
  if (!options.quick) {
    writeReport(join(ROOT, 'docs/benchmarks.md'), HEADER, reports, SUITE_NAMES);
    ctx.log('written to docs/benchmarks.md');
  } else {
    for (const report of reports) process.stdout.write(`\n${report.markdown}\n`);
  }
  if (failures.length > 0) {
    ctx.log(`suites that could not run: ${failures.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
