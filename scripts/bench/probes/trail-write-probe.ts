// Where a trail emit's time goes (issue 59 item 5): each step timed alone, sequentially, against
// a Redis (REDIS_URL, default the local 6379) under a prefix of its own, removed at the end.
//   npx ts-node -r tsconfig-paths/register --transpile-only scripts/bench/probes/trail-write-probe.ts
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { TrailEmitter } from '../../../apps/provisioner/src/trail/trail-emitter';
import { TRAIL_QUEUE, TrailJobName } from '../../../apps/provisioner/src/trail/trail.queue';
import type { ProvisionerSettings } from '../../../apps/provisioner/src/config/provisioner.settings';

const N = Number(process.env.PROBE_N ?? 3000);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `probe${process.pid}`;

const event = () => ({
  id: randomUUID(),
  type: 'drs_object.allow' as const,
  occurred_at: new Date().toISOString(),
  object_id: 'BENCH-TRAIL~SUB-DRS~TRAIL-DS',
  subject: 'bench-trail-reader',
  dataset: 'CATALOG-DS-000123',
  visa: randomUUID(),
});

function show(label: string, us: number[]): void {
  us.sort((a, b) => a - b);
  const at = (p: number) => us[Math.min(us.length - 1, Math.floor((p / 100) * us.length))];
  console.log(`${label.padEnd(58)} p50 ${at(50).toFixed(0).padStart(6)} µs  p99 ${at(99).toFixed(0).padStart(6)} µs`);
}

async function timed(label: string, step: () => Promise<unknown> | unknown): Promise<void> {
  for (let i = 0; i < 200; i++) await step();
  const us: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = process.hrtime.bigint();
    await step();
    us.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  show(label, us);
}

/**
 * `queue.add` split in two: the script's round trip (its command sent to its reply, timed by
 * wrapping the client's `runCommand`), and the rest (the job built, its options packed, the
 * promises around it), per call.
 */
async function splitAdd(
  label: string,
  client: { runCommand: (name: string, args: unknown[]) => Promise<unknown> },
  add: () => Promise<unknown>,
): Promise<void> {
  const run = client.runCommand;
  let trip = 0;
  client.runCommand = (name, args) => {
    const t = process.hrtime.bigint();
    return run(name, args).then((reply) => {
      trip += Number(process.hrtime.bigint() - t) / 1000;
      return reply;
    });
  };
  const trips: number[] = [];
  const rest: number[] = [];
  try {
    for (let i = 0; i < 200 + N; i++) {
      trip = 0;
      const t = process.hrtime.bigint();
      await add();
      const whole = Number(process.hrtime.bigint() - t) / 1000;
      if (i < 200) continue;
      trips.push(trip);
      rest.push(whole - trip);
    }
  } finally {
    client.runCommand = run;
  }
  show(`${label}: the script's round trip`, trips);
  show(`${label}: the rest (client side)`, rest);
}

async function main(): Promise<void> {
  const queue = new Queue(TRAIL_QUEUE, { connection: { url }, prefix });
  const client = await (queue.getBackend() as unknown as { client: Promise<import('ioredis').Redis> }).client;
  const emitter = new TrailEmitter(queue, {
    catalogRegistration: { url: 'http://unused', apiKey: 'x' },
  } as ProvisionerSettings);
  const keep = { age: 7 * 86_400, count: 100_000 };
  const list = `${prefix}:${TRAIL_QUEUE}:probe-list`;
  const stream = `${prefix}:${TRAIL_QUEUE}:probe-stream`;
  await client.config('RESETSTAT');
  await timed('setImmediate hop', () => new Promise((r) => setImmediate(r)));
  await timed('build event + JSON.stringify', () => JSON.stringify(event()));
  await timed('PING (the queue client, one round trip)', () => client.ping());
  await timed('RPUSH one serialized event', () => client.rpush(list, JSON.stringify(event())));
  await timed('XADD one serialized event', () =>
    client.xadd(stream, '*', 'e', JSON.stringify(event())),
  );
  await timed('queue.add (Report job, emitter opts)', () => {
    const e = event();
    return queue.add(TrailJobName.Report, e, {
      jobId: e.id,
      removeOnComplete: keep,
      removeOnFail: false,
    });
  });
  await splitAdd(
    'queue.add',
    client as unknown as Parameters<typeof splitAdd>[1],
    () => {
      const e = event();
      return queue.add(TrailJobName.Report, e, {
        jobId: e.id,
        removeOnComplete: keep,
        removeOnFail: false,
      });
    },
  );
  await timed('EVALSHA of a one-line script (a script round trip)', () =>
    client.eval('return 1', 0),
  );
  await timed('TrailEmitter.emit (setImmediate + queue.add)', () =>
    emitter.emit({ type: 'drs_object.allow', object_id: 'x', subject: 's', dataset: 'd' }),
  );
  const stats = await client.info('commandstats');
  for (const line of stats.split('\n')) {
    if (/cmdstat_(evalsha|rpush|xadd|ping|eval)\b/.test(line)) console.log(`server: ${line.trim()}`);
  }
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await queue.close();
}

void main();
