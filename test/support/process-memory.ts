import { existsSync, readFileSync } from 'node:fs';

/**
 * The peak resident set (VmHWM, kept by the kernel) of every app process a test file starts,
 * sampled while it runs, so a process killed on purpose keeps the peak it reached. The
 * robustness suite holds each to 75 % of its Kubernetes memory limit
 * (test/robustness/support/memory-limits.ts).
 */
export interface ProcessPeak {
  /** 'worker', 'provisioner-api' or 'catalog' (what Kubernetes runs it as), else the entry. */
  role: string;
  pid: number;
  /** Run from the build (as deployed and in CI) rather than the TypeScript sources. */
  built: boolean;
  peakBytes: number;
}

const SAMPLE_MS = 200;
const peaks: ProcessPeak[] = [];

function peakOf(pid: number): number | null {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return null;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(status, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null; // exited between the check and the read
  }
}

/** Follows a process until it exits. */
export function trackPeak(
  role: string,
  pid: number,
  built: boolean,
  exited: Promise<unknown>,
): ProcessPeak {
  const entry: ProcessPeak = { role, pid, built, peakBytes: 0 };
  peaks.push(entry);
  const sample = () => {
    const peak = peakOf(pid);
    if (peak !== null) entry.peakBytes = Math.max(entry.peakBytes, peak);
  };
  const timer = setInterval(sample, SAMPLE_MS);
  timer.unref();
  void exited.then(() => clearInterval(timer));
  return entry;
}

/** Every process started so far in this test file, each sampled once more if still running. */
export function processPeaks(): ProcessPeak[] {
  for (const entry of peaks) {
    const peak = peakOf(entry.pid);
    if (peak !== null) entry.peakBytes = Math.max(entry.peakBytes, peak);
  }
  return peaks;
}
