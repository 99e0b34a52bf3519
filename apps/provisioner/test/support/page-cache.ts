import { execFileSync } from 'node:child_process';

/** Bytes of `path` held in the page cache, as util-linux's fincore(1) counts them. */
export function cachedBytes(path: string): number {
  const out = execFileSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', path]);
  return Number(out.toString().trim());
}
