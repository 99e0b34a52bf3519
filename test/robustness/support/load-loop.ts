import { sleep } from '../../../scripts/lib/child-process';

export interface Sample {
  at: number;
  path: string;
  status: number;
  body: string;
  contentType: string;
}

export interface LoadLoop {
  samples: Sample[];
  /** Stops the readers and resolves once every request in flight has ended. */
  stop(): Promise<void>;
}

/**
 * `readers` concurrent clients, each requesting `paths` in turn until stopped; every answer is
 * kept with its time. Hard-bounded by `maxMs` even if stop() is never called.
 */
export function startReaders(
  baseUrl: string,
  paths: string[],
  headers: Record<string, string>,
  readers: number,
  maxMs: number,
): LoadLoop {
  const samples: Sample[] = [];
  const deadline = Date.now() + maxMs;
  let stopped = false;
  const reader = async (offset: number) => {
    for (let i = offset; !stopped && Date.now() < deadline; i++) {
      const path = paths[i % paths.length];
      try {
        const res = await fetch(baseUrl + path, { headers, signal: AbortSignal.timeout(15_000) });
        samples.push({ at: Date.now(), path, status: res.status, body: await res.text(), contentType: res.headers.get('content-type') ?? '' });
      } catch (error) {
        samples.push({ at: Date.now(), path, status: 0, body: String(error), contentType: '' });
        await new Promise((done) => setTimeout(done, 50));
      }
    }
  };
  const running = Promise.all(Array.from({ length: readers }, (_, i) => reader(i)));
  return {
    samples,
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

export { sleep };

/** Polls `check` every 100 ms until it is true; false when `timeoutMs` runs out first. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}
