import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

/** One suite's part of docs/benchmarks.md: markdown, plus whether every target was met. */
export interface SuiteReport {
  name: string;
  title: string;
  markdown: string;
  targetsMet: boolean;
}

export function machineDescription(postgres: string, redis: string): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return [
    `- Date: ${new Date().toISOString()}`,
    `- CPU: ${cpus().length} × ${cpu} (nproc ${cpus().length}, shared with other work on the machine)`,
    `- Memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- Node.js ${process.version}, PostgreSQL ${postgres}, Redis ${redis}`,
    `- Platform: ${process.platform} ${process.arch}`,
  ].join('\n');
}

export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export const fmt = (value: number, digits = 1) =>
  Number.isFinite(value) ? value.toFixed(digits) : String(value);

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values: number[], p: number): number {
  // A typed copy sorts numerically without a comparator: the trail's bootstrap takes thousands.
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const median = (values: number[]) => percentile(values, 50);

export const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');

const begin = (name: string) => `<!-- bench:${name} -->`;
const end = (name: string) => `<!-- /bench:${name} -->`;

/**
 * Writes the report. A suite run replaces only its own section, so `--only terms` keeps the
 * catalog figures of an earlier run (each section carries its own date). Whatever follows the
 * last section (hand-written text) is kept as it is.
 */
export function writeReport(
  path: string,
  header: string,
  reports: SuiteReport[],
  order: string[],
): void {
  const previous = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const sections = order.map((name) => {
    const fresh = reports.find((r) => r.name === name);
    if (fresh) return `${begin(name)}\n${fresh.markdown.trim()}\n${end(name)}`;
    const match = previous.match(new RegExp(`${begin(name)}[\\s\\S]*?${end(name)}`));
    return match ? match[0] : `${begin(name)}\n_Not run yet._\n${end(name)}`;
  });
  const lastEnd = Math.max(
    ...order.map((name) => {
      const at = previous.lastIndexOf(end(name));
      return at < 0 ? -1 : at + end(name).length;
    }),
  );
  const tail = lastEnd < 0 ? '' : previous.slice(lastEnd).trim();
  writeFileSync(path, `${header.trim()}\n\n${sections.join('\n\n')}\n${tail ? `\n${tail}\n` : ''}`);
}
