// Archive mode's import against plain (issue 57 item 6), one dataset of the crypt4gh-archive
// suite, a few interleaved rounds, each import's step times as its worker logs them: for A/B work
// between bench runs (the suite itself also measures downloads and memory). Needs the bench build
// (.bench/dist: run the suite once without --no-build). Run it alone (`/work/notes/quiet`).
//   PROBE_CASE=SMALL|MIXED PROBE_ROUNDS=3 npx ts-node -r tsconfig-paths/register --transpile-only \
//     scripts/bench/probes/archive-import-probe.ts
// BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the APIs and workers (threads too).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, secretKeyFile } from '@app/crypt4gh';
import { cloneImportDataset, importCases, writeImportDataset } from '../data/import-data';
import { cpuMs, ROOT } from '../lib/processes';
import { fmt, median } from '../lib/report';
import { roundOrder } from '../lib/rounds';
import { settle, startSetup, timeImport, warm } from '../suites/imports.bench';

const CASE = process.env.PROBE_CASE ?? 'SMALL';
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 3);

async function main(): Promise<void> {
  const c = importCases(process.env.PROBE_QUICK === '1').find((x) => x.key === CASE);
  if (!c) throw new Error(`PROBE_CASE: MIXED or SMALL, not ${CASE}`);
  const base = join(ROOT, '.bench', `archive-probe-${process.pid}`);
  mkdirSync(base, { recursive: true });
  try {
    const keyFile = join(base, 'archive.sec');
    writeFileSync(keyFile, await secretKeyFile(generateKeyPair().secretKey), { mode: 0o600 });
    const dropzone = join(base, 'dropzone');
    writeImportDataset(dropzone, c.key, c.files);
    const sides = ['P', 'A'];
    for (const side of sides)
      for (let round = 0; round < ROUNDS; round++)
        cloneImportDataset(dropzone, c.key, `${c.key}-${side}${round}`);
    const source = join(dropzone, 'datasets', c.key, 'payload');
    const plain = await startSetup('redis', join(base, 'plain'), dropzone);
    try {
      const archive = await startSetup('redis', join(base, 'archive'), dropzone, {
        STORAGE_ENCRYPTION: 'crypt4gh',
        C4GH_ARCHIVE_SECRET_KEY_FILE: keyFile,
      });
      try {
        const setups = { P: plain, A: archive };
        const ms: Record<string, number[]> = { P: [], A: [] };
        for (let round = 0; round < ROUNDS; round++) {
          for (const side of roundOrder(sides, round) as ('P' | 'A')[]) {
            const setup = setups[side];
            warm(source);
            await settle();
            const load = loadavg()[0];
            const cpu = cpuMs(setup.worker.child.pid!);
            const timing = await timeImport(setup.apiUrl, `${c.key}-${side}${round}`);
            ms[side].push(timing.ms);
            console.error(
              `probe ${c.key} round ${round + 1} ${side === 'P' ? 'plain  ' : 'archive'}: ${fmt(timing.ms, 0)} ms, ` +
                `worker CPU ${fmt(cpuMs(setup.worker.child.pid!) - cpu, 0)} ms, load ${fmt(load, 1)}; ` +
                `steps ${setup.steps.get(timing.id) ?? [...setup.steps.values()].pop()}`,
            );
          }
        }
        const ratios = ms.P.map((p, i) => p / ms.A[i]);
        console.error(
          `probe ${c.key}: ratios ${ratios.map((r) => fmt(r, 2)).join(', ')}, median ${fmt(median(ratios), 2)}`,
        );
      } finally {
        await archive.stop();
      }
    } finally {
      await plain.stop();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
