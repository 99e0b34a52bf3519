import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { generateKeyPair, secretKeyFile } from '@app/crypt4gh';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { BenchContext } from '../lib/context';
import { cpuMs, processMemory } from '../lib/processes';
import { fmt, median, SuiteReport, table, verdict } from '../lib/report';
import { cloneImportDataset, writeImportDataset } from '../data/import-data';
import { runRound, Setup, startSetup, timeImport } from './imports.bench';
import { startSwift, swiftStorageEnv } from './s3-imports.bench';

/** Archive mode at least this fraction of plain (issue 57 item 6). */
const TARGET_RATIO = 0.85;
/** Flat: from the 1 MiB file to the big one, archive mode's worker grows less than this more than plain's. */
const MEMORY_SLACK_BYTES = 16 * 2 ** 20;
const MiB = 2 ** 20;
const GiB = 2 ** 30;
const PLAIN = 'plain';
const ARCHIVE = 'archive (crypt4gh)';
const MAIN = 'archive, IMPORT_COPY_THREADS=0';

interface SideResult {
  label: string;
  /** Peak RSS (VmHWM) of the worker after the 1 MiB import, then after the big one. */
  small: number;
  big: number;
  ms: number[];
  cpu: number[];
}

/**
 * Archive mode on S3 storage (the bench's Swift, as s3-imports uses), issue 57 item 6: the
 * worker's memory from a 1 MiB file to a 1 GiB one, and the 1 GiB file's import time, against a
 * plain S3 import beside it. A third set-up seals on the worker's main thread
 * (IMPORT_COPY_THREADS=0: no copy threads, so no sealing threads either), as the S3 path did
 * before large bodies were sealed on threads.
 */
export async function crypt4ghArchiveS3Bench(ctx: BenchContext): Promise<SuiteReport> {
  const base = join(ctx.tempDir, 'crypt4gh-archive-s3');
  mkdirSync(base, { recursive: true });
  const keyFile = join(base, 'archive.sec');
  writeFileSync(keyFile, await secretKeyFile(generateKeyPair().secretKey), { mode: 0o600 });
  const archiveEnv = { STORAGE_ENCRYPTION: 'crypt4gh', C4GH_ARCHIVE_SECRET_KEY_FILE: keyFile };
  const rounds = ctx.quick ? 2 : Number(process.env.BENCH_C4GH_S3_ROUNDS ?? 5);
  const bigBytes = (ctx.quick ? 64 : 1024) * MiB;
  const dropzone = join(base, 'dropzone');
  const sides = [
    { label: PLAIN, key: 'P', env: {} as NodeJS.ProcessEnv },
    { label: ARCHIVE, key: 'A', env: archiveEnv },
    { label: MAIN, key: 'M', env: { ...archiveEnv, IMPORT_COPY_THREADS: '0' } },
  ];
  writeImportDataset(dropzone, 'ONE-MIB', [{ path: 'small.bin', size: MiB }]);
  writeImportDataset(dropzone, 'BIG', [{ path: 'big.bin', size: bigBytes }]);
  for (const side of sides) {
    cloneImportDataset(dropzone, 'ONE-MIB', `ONE-MIB-${side.key}`);
    cloneImportDataset(dropzone, 'BIG', `BIG-${side.key}`);
    for (let round = 0; round < rounds; round++)
      cloneImportDataset(dropzone, 'BIG', `BIG-${side.key}${round}`);
  }
  ctx.log('datasets written');
  const swift = await startSwift(join(base, 'swift'));
  const bucket = 'bench';
  const setups: Setup[] = [];
  const results: SideResult[] = [];
  const loads: number[] = [];
  try {
    await swift.client.send(new CreateBucketCommand({ Bucket: bucket }));
    for (const side of sides) {
      const setup = await startSetup('redis', join(base, side.key), dropzone, {
        ...swiftStorageEnv(swift.endpoint, bucket),
        S3_PREFIX: `bench-${side.key}/`,
        ...side.env,
      });
      setups.push(setup);
      const pid = setup.worker.child.pid!;
      await timeImport(setup.apiUrl, `ONE-MIB-${side.key}`);
      const small = processMemory(pid, 'VmHWM');
      await timeImport(setup.apiUrl, `BIG-${side.key}`);
      const big = processMemory(pid, 'VmHWM');
      ctx.log(
        `${side.label}: worker peak ${fmt(small / MiB)} MiB after 1 MiB, ${fmt(big / MiB)} MiB after ${fmt(bigBytes / MiB, 0)} MiB`,
      );
      results.push({ label: side.label, small, big, ms: [], cpu: [] });
    }
    const source = join(dropzone, 'datasets', 'BIG', 'payload');
    const ms = new Map(sides.map((s) => [s.label, [] as number[]]));
    const cpu = new Map(sides.map((s) => [s.label, [] as number[]]));
    const timed = sides.map((side, i) => ({
      label: side.label,
      run: async (round: number) =>
        (await timeImport(setups[i].apiUrl, `BIG-${side.key}${round}`)).ms,
      cpu: () => cpuMs(setups[i].worker.child.pid!),
    }));
    for (let round = 0; round < rounds; round++) {
      loads.push(loadavg()[0]);
      await runRound(timed, round, source, ms, cpu);
      ctx.log(
        `round ${round + 1}: ${sides.map((s) => `${s.label} ${fmt(ms.get(s.label)![round], 0)} ms`).join(', ')}`,
      );
    }
    loads.push(loadavg()[0]);
    for (const r of results) {
      r.ms = ms.get(r.label)!;
      r.cpu = cpu.get(r.label)!;
    }
  } finally {
    for (const setup of setups.reverse()) await setup.stop().catch(() => undefined);
    swift.stop();
    rmSync(dropzone, { recursive: true, force: true });
  }
  return report(ctx, results, bigBytes, rounds, loads);
}

function report(
  ctx: BenchContext,
  results: SideResult[],
  bigBytes: number,
  rounds: number,
  loads: number[],
): SuiteReport {
  const judge = (ok: boolean, [yes, no] = ['met', 'missed']) =>
    ctx.quick ? `${ok ? yes : no} (quick: not judged)` : verdict(ok);
  const of = (label: string) => results.find((r) => r.label === label)!;
  const growth = (r: SideResult) => r.big - r.small;
  const checks: boolean[] = [];
  const memoryRows = results.map((r) => {
    const beyond = growth(r) - growth(of(PLAIN));
    const flat = beyond < MEMORY_SLACK_BYTES;
    if (r.label === ARCHIVE) checks.push(flat);
    return [
      `worker, ${r.label}`,
      fmt(r.small / MiB, 0),
      fmt(r.big / MiB, 0),
      fmt(growth(r) / MiB, 1),
      r.label === PLAIN ? '–' : fmt(beyond / MiB, 1),
      r.label === PLAIN ? '–' : judge(flat, ['flat', 'grew']),
    ];
  });
  const perRound = (ours: string, other: string) =>
    of(ours).ms.map((x, i) => of(other).ms[i] / x);
  const ratioRow = (label: string, ratios: number[], target: number | null) => {
    const value = median(ratios);
    if (target !== null) checks.push(value >= target);
    return [
      label,
      ratios.map((x) => fmt(x, 2)).join(', '),
      `**${fmt(value, 2)}×**`,
      target === null ? '–' : `≥ ${target}×: ${judge(value >= target)}`,
    ];
  };
  const size = (bytes: number) =>
    bytes >= GiB ? `${fmt(bytes / GiB, 2)} GiB` : `${fmt(bytes / MiB, 0)} MiB`;
  const lines = [
    '## Crypt4GH archive mode on S3',
    '',
    'Issue 57 item 6 on S3 storage (the Swift server the s3-imports section uses, one bucket, a prefix per set-up):',
    'three set-ups side by side, each its own API, worker and Redis: plain S3 storage, archive mode',
    '(`STORAGE_ENCRYPTION=crypt4gh`; a body of 1 MiB or more is sealed on a sealing thread and uploaded from the',
    "main thread), and archive mode with `IMPORT_COPY_THREADS=0` (no copy threads, so no sealing threads: every body sealed on the worker's",
    'main thread, as the S3 path sealed large bodies before). Memory: peak RSS (VmHWM) of each worker after a',
    `1 MiB file and after a ${size(bigBytes)} one (the same process, the big file second); flat: archive mode grows less`,
    `than ${MEMORY_SLACK_BYTES / MiB} MiB more than plain. Import: the ${size(bigBytes)} file (one file, hard-linked clones), from the POST until the record`,
    'says `imported`, each side from a warm page cache after a `sync`, in an order rotated each round; the ratio is',
    `plain ms / archive ms per round, the median the figure.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    `### Memory with the file size (load average ${fmt(loads[0] ?? NaN, 1)} before the rounds)`,
    '',
    table(
      [
        'process',
        'peak MiB after 1 MiB',
        `peak MiB after ${size(bigBytes)}`,
        'growth MiB',
        'growth beyond plain MiB',
        `flat (beyond plain < ${MEMORY_SLACK_BYTES / MiB} MiB)`,
      ],
      memoryRows,
    ),
    '',
    `### Import: ${size(bigBytes)}, one file (${rounds} rounds; load average ${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)})`,
    '',
    table(
      ['side', 'ms per round', 'median ms', 'MB/s (median)', 'worker CPU ms per round'],
      results.map((r) => [
        r.label,
        r.ms.map((x) => fmt(x, 0)).join(', '),
        fmt(median(r.ms), 0),
        fmt(bigBytes / 1e6 / (median(r.ms) / 1000), 0),
        r.cpu.map((x) => fmt(x, 0)).join(', '),
      ]),
    ),
    '',
    table(
      ['import', 'ratio per round', 'median', 'target'],
      [
        ratioRow('archive vs plain (plain ms / archive ms)', perRound(ARCHIVE, PLAIN), TARGET_RATIO),
        ratioRow(
          'archive, main thread vs plain (plain ms / archive ms)',
          perRound(MAIN, PLAIN),
          null,
        ),
        ratioRow(
          'sealing threads vs main thread (main-thread ms / threads ms)',
          perRound(ARCHIVE, MAIN),
          null,
        ),
      ],
    ),
    '',
    ctx.quick ? 'Targets not judged: quick mode.' : `Targets ${verdict(checks.every(Boolean))}.`,
  ];
  return {
    name: 'crypt4gh-archive-s3',
    title: 'Crypt4GH archive mode on S3',
    markdown: lines.join('\n'),
    targetsMet: !ctx.quick && checks.every(Boolean),
  };
}
