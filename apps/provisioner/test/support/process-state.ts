import { readFileSync } from 'node:fs';

/**
 * Whether a process is there and not a zombie (which is dead, waiting for whoever reaps it: a
 * killed orphan in a container whose first process reaps nothing stays one).
 */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
