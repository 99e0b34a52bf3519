// How stale a catalog replica's read is after a write through another replica: the test that
// bounds it (apps/catalog-api/test/replica-staleness.e2e-spec.ts) and the benchmark that reports
// its percentiles (scripts/bench/suites/catalog-replicas.bench.ts) measure it the same way.

export interface StalenessOptions {
  /** Base URLs of the replicas, one database behind them all. */
  urls: string[];
  /** A global key (the write creates a user; the read lists users). */
  key: string;
  writes: number;
  /** Least time between the starts of two writes (1000: one write a second). */
  intervalMs: number;
  /** How long one replica may go on answering without a write before the measure fails. */
  deadlineMs: number;
  /** Makes the users of one run unique, so runs on the same database never match each other. */
  tag: string;
}

export interface StalenessSample {
  write: number;
  writer: number;
  reader: number;
  /** From the write's answer to the end of the first read, on `reader`, that holds it. */
  delayMs: number;
  /** Reads on `reader` begun after the write was answered that did not hold it yet. */
  staleReads: number;
}

const nameOf = (tag: string, n: number) => `Replica Write-${tag}-${n}`;

async function write(url: string, key: string, tag: string, n: number): Promise<void> {
  const res = await fetch(`${url}/api/admin/users`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      username: `replica-${tag}-${n}`,
      email: `replica-${tag}-${n}@example.org`,
      first_name: 'Replica',
      last_name: `Write-${tag}-${n}`,
    }),
  });
  const text = await res.text();
  if (res.status !== 201)
    throw new Error(`the write through ${url} answered ${res.status}: ${text}`);
}

/** Whether `GET /api/users` (a cached read, answered from memory when repeated) lists `name`. */
async function reads(url: string, key: string, name: string): Promise<boolean> {
  const res = await fetch(`${url}/api/users`, { headers: { 'X-API-Key': key } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /api/users on ${url} answered ${res.status}`);
  return (JSON.parse(text) as { results: { text: string }[] }).results.some((u) => u.text === name);
}

/**
 * Writes through replica n mod R, at most one write per `intervalMs`; once each write is
 * answered, every other replica is read back to back until one of its reads holds the write.
 */
export async function measureReplicaStaleness(
  options: StalenessOptions,
): Promise<StalenessSample[]> {
  const samples: StalenessSample[] = [];
  for (let n = 0; n < options.writes; n++) {
    const started = performance.now();
    const writer = n % options.urls.length;
    await write(options.urls[writer], options.key, options.tag, n);
    const answered = performance.now();
    const name = nameOf(options.tag, n);
    const readers = options.urls.flatMap((url, reader) => (reader === writer ? [] : [reader]));
    samples.push(
      ...(await Promise.all(
        readers.map(async (reader) => {
          let staleReads = 0;
          for (;;) {
            if (await reads(options.urls[reader], options.key, name))
              return {
                write: n,
                writer,
                reader,
                delayMs: performance.now() - answered,
                staleReads,
              };
            staleReads += 1;
            if (performance.now() - answered > options.deadlineMs)
              throw new Error(
                `replica ${reader} still read no write ${n} (made through replica ${writer}) ` +
                  `${options.deadlineMs} ms after it was answered`,
              );
          }
        }),
      )),
    );
    const wait = options.intervalMs - (performance.now() - started);
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
  }
  return samples;
}
