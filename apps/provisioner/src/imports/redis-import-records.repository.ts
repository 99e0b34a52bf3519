import type { Queue } from 'bullmq';
import Redis, { ChainableCommander, RedisOptions } from 'ioredis';
import { IMPORT_STATES, ImportState, recordStateOf } from './import-record';
import {
  ImportJob,
  ImportJobPage,
  ImportRecordFilter,
  ImportRecordsRepository,
} from './import-records.repository';
import { IMPORT_KINDS, ImportJobName } from './imports.queue';

/**
 * BullMQ's state of many jobs in one round trip, as BullMQ's own getState decides it but
 * without its LPOS on the wait list (O(waiting jobs) per job): a job in none of the sorted
 * sets and not in the (short) active list, whose hash exists, is waiting.
 * KEYS: completed, failed, delayed, prioritized, waiting-children, active; ARGV[1]: the job key
 * prefix, ARGV[2..]: job ids.
 */
const JOB_STATES_LUA = `
local active = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[6], 0, -1)) do active[id] = true end
local states = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local state = 'unknown'
  if redis.call('ZSCORE', KEYS[1], id) then state = 'completed'
  elseif redis.call('ZSCORE', KEYS[2], id) then state = 'failed'
  elseif redis.call('ZSCORE', KEYS[3], id) then state = 'delayed'
  elseif redis.call('ZSCORE', KEYS[4], id) then state = 'prioritized'
  elseif redis.call('ZSCORE', KEYS[5], id) then state = 'waiting-children'
  elseif active[id] then state = 'active'
  elseif redis.call('EXISTS', ARGV[1] .. id) == 1 then state = 'waiting'
  end
  states[i - 1] = state
end
return states
`;

/** Bump to rebuild every index from the jobs (a new layout of the keys). */
const INDEX_VERSION = '1';
/** Jobs read per call while building the index from an existing queue. */
const BUILD_CHUNK = 1000;
/** The BullMQ states an import job can be in, each read while building the index. */
const JOB_STATES = [
  'waiting',
  'delayed',
  'prioritized',
  'waiting-children',
  'active',
  'completed',
  'failed',
];
/** Rounds of reading past entries that turned out stale, before a page is returned short. */
const MAX_ROUNDS = 20;

type IndexClient = Redis & {
  importJobStates(...args: string[]): Promise<string[]>;
};

interface ReadJob {
  id: string;
  job: ImportJob | undefined;
  jobState: string;
}

/**
 * Import jobs indexed in sorted sets scored by creation time, next to the queue's own keys
 * (`<prefix>:imports:records:…`, so obliterating the queue removes them too): one set of all,
 * one per record state, per source and per source and state. A page is a ZREVRANGE of the
 * filter's set plus one read per job on it; the count a ZCARD.
 *
 * The index is told of changes (touched) when a job is queued, started, finished or retried,
 * always with the state BullMQ then reports. What it can miss (a worker killed between BullMQ
 * moving a job and the event, a job stalled back to waiting, jobs changed from the queue
 * dashboard) is repaired as it is read: every page checks each job's actual state and drops
 * (and re-files) the ones that no longer match its filter, and every listing first re-checks
 * the (few) jobs filed as running. An existing queue is indexed once, on the first listing.
 */
export class RedisImportRecords extends ImportRecordsRepository {
  private readonly redis: IndexClient;
  private built: Promise<void> | null = null;

  constructor(
    private readonly queue: Queue,
    connection: RedisOptions,
  ) {
    super();
    this.redis = new Redis({ ...connection, connectionName: 'import-records' }) as IndexClient;
    this.redis.defineCommand('importJobStates', {
      numberOfKeys: 6,
      lua: JOB_STATES_LUA,
      readOnly: true,
    });
    // Reconnects by itself; the queue's own error logging reports an unreachable Redis.
    this.redis.on('error', () => undefined);
  }

  async page(filter: ImportRecordFilter, offset: number, limit: number): Promise<ImportJobPage> {
    await this.ensureBuilt();
    await this.recheckRunning();
    const key = this.setKey(filter);
    const jobs: ImportJobPage['jobs'] = [];
    let cursor = offset;
    for (let round = 0; jobs.length < limit && round < MAX_ROUNDS; round++) {
      const ids = await this.redis.zrevrange(key, cursor, cursor + limit - jobs.length - 1);
      if (ids.length === 0) break;
      let dropped = 0;
      for (const { id, job, jobState } of await this.read(ids)) {
        const state = job && recordStateOf(job, jobState);
        if (!job || (filter.state && state !== filter.state)) {
          // Gone, or moved on: re-filed (or forgotten), which shifts the ranks after it.
          await (job ? this.file(job, state!) : this.forget(id, filter.source));
          dropped += 1;
          continue;
        }
        jobs.push({ job, jobState });
      }
      cursor += ids.length - dropped;
    }
    return { jobs, count: await this.redis.zcard(key) };
  }

  async touched(jobId: string): Promise<void> {
    const [{ job, jobState }] = await this.read([jobId]);
    if (job) await this.file(job, recordStateOf(job, jobState));
  }

  async removed(jobId: string): Promise<void> {
    const job = (await this.queue.getJob(jobId)) as ImportJob | undefined;
    await this.forget(jobId, job?.data.source);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private key(...parts: string[]): string {
    return this.queue.toKey(['records', ...parts].join(':'));
  }

  private setKey(filter: ImportRecordFilter): string {
    const parts = [
      ...(filter.source !== undefined ? ['source', filter.source] : []),
      ...(filter.state !== undefined ? ['state', filter.state] : []),
    ];
    return this.key(...(parts.length > 0 ? parts : ['all']));
  }

  /** The jobs and their BullMQ states, in one script call and one pipeline of reads. */
  private async read(ids: string[]): Promise<ReadJob[]> {
    const k = this.queue.keys;
    const [states, jobs] = await Promise.all([
      this.redis.importJobStates(
        k.completed,
        k.failed,
        k.delayed,
        k.prioritized,
        k['waiting-children'],
        k.active,
        this.queue.toKey(''),
        ...ids,
      ),
      Promise.all(ids.map((id) => this.queue.getJob(id) as Promise<ImportJob | undefined>)),
    ]);
    return ids.map((id, i) => {
      const job = jobs[i];
      const imported = job && IMPORT_KINDS.includes(job.name as ImportJobName.Dataset);
      return {
        id,
        job: imported && states[i] !== 'unknown' ? job : undefined,
        jobState: states[i],
      };
    });
  }

  private stage(multi: ChainableCommander, job: ImportJob, state: ImportState): void {
    const { source } = job.data;
    const score = job.timestamp;
    for (const s of IMPORT_STATES) {
      multi.zrem(this.key('state', s), job.id!);
      multi.zrem(this.key('source', source, 'state', s), job.id!);
    }
    multi.zadd(this.key('all'), score, job.id!);
    multi.zadd(this.key('source', source), score, job.id!);
    multi.zadd(this.key('state', state), score, job.id!);
    multi.zadd(this.key('source', source, 'state', state), score, job.id!);
  }

  /** Files a job under its record state (and nowhere else), atomically. */
  private async file(job: ImportJob, state: ImportState): Promise<void> {
    const multi = this.redis.multi();
    this.stage(multi, job, state);
    await multi.exec();
  }

  /** Removes an id from every set (of its source's too, when known). */
  private async forget(jobId: string, source: string | undefined): Promise<void> {
    const multi = this.redis.multi();
    multi.zrem(this.key('all'), jobId);
    for (const s of IMPORT_STATES) multi.zrem(this.key('state', s), jobId);
    if (source !== undefined) {
      multi.zrem(this.key('source', source), jobId);
      for (const s of IMPORT_STATES) multi.zrem(this.key('source', source, 'state', s), jobId);
    }
    await multi.exec();
  }

  /** The jobs filed as running are few; a killed worker's job is often wrong there. */
  private async recheckRunning(): Promise<void> {
    const ids = await this.redis.zrange(this.key('state', 'running'), 0, -1);
    if (ids.length === 0) return;
    for (const { id, job, jobState } of await this.read(ids)) {
      if (!job) await this.forget(id, undefined);
      else if (jobState !== 'active') await this.file(job, recordStateOf(job, jobState));
    }
  }

  private ensureBuilt(): Promise<void> {
    this.built ??= this.buildOnce().catch((error: unknown) => {
      this.built = null;
      throw error;
    });
    return this.built;
  }

  /** Indexes every import job of a queue that has none yet (a queue older than the index). */
  private async buildOnce(): Promise<void> {
    if ((await this.redis.get(this.key('version'))) === INDEX_VERSION) return;
    for (const jobState of JOB_STATES) {
      for (let start = 0; ; start += BUILD_CHUNK) {
        const jobs = (await this.queue.getJobs(
          [jobState as 'waiting'],
          start,
          start + BUILD_CHUNK - 1,
          true,
        )) as ImportJob[];
        const multi = this.redis.multi();
        for (const job of jobs)
          if (job && IMPORT_KINDS.includes(job.name as ImportJobName.Dataset))
            this.stage(multi, job, recordStateOf(job, jobState));
        await multi.exec();
        if (jobs.length < BUILD_CHUNK) break;
      }
    }
    await this.redis.set(this.key('version'), INDEX_VERSION);
  }
}
