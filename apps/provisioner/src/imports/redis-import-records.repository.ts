import type { JobType, Queue } from 'bullmq';
import { createHash } from 'node:crypto';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import { IMPORT_STATES, ImportJobFields, ImportState, recordStateOf } from './import-record';
import {
  ImportJobPage,
  ImportRecordFilter,
  ImportRecordsRepository,
  JobLock,
  RecordWrite,
} from './import-records.repository';
import { IMPORT_KINDS, ImportJobData, ImportJobName } from './import.queue';
import { boundedDetails, LISTED_DETAILS } from './record-bounds';

/** The fields of BullMQ's job hash a record needs (not its options nor its stack traces). */
const JOB_FIELDS = [
  'name',
  'data',
  'progress',
  'timestamp',
  'processedOn',
  'finishedOn',
  'ats',
  'atm',
  'attemptsMade',
  'failedReason',
  'returnvalue',
];

/**
 * A page's jobs in one round trip: BullMQ's state of each, decided as BullMQ's own getState
 * does but without its LPOS on the wait list (O(waiting jobs) per job): a job in none of the
 * sorted sets and not in the (short) active list, whose hash exists, is waiting; and the
 * fields of its hash a record needs. KEYS: completed, failed, delayed, prioritized,
 * waiting-children, active; ARGV[1]: the job key prefix, ARGV[2..]: job ids. Returns per id
 * the state followed by the fields.
 */
const READ_JOBS_LUA = `
local fields = {${JOB_FIELDS.map((f) => `'${f}'`).join(', ')}}
local active = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[6], 0, -1)) do active[id] = true end
local out = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local key = ARGV[1] .. id
  local state = 'unknown'
  if redis.call('ZSCORE', KEYS[1], id) then state = 'completed'
  elseif redis.call('ZSCORE', KEYS[2], id) then state = 'failed'
  elseif redis.call('ZSCORE', KEYS[3], id) then state = 'delayed'
  elseif redis.call('ZSCORE', KEYS[4], id) then state = 'prioritized'
  elseif redis.call('ZSCORE', KEYS[5], id) then state = 'waiting-children'
  elseif active[id] then state = 'active'
  elseif redis.call('EXISTS', key) == 1 then state = 'waiting'
  end
  out[#out + 1] = state
  local values = redis.call('HMGET', key, unpack(fields))
  for j = 1, #fields do out[#out + 1] = values[j] or false end
end
return out
`;

/**
 * A write on an import job's hash by the holder of a lock, checked in the same script: KEYS
 * the holder's lock key (BullMQ's `<job key>:lock`, holding the token while the lock lasts)
 * and the import job's hash; ARGV the token, the SHA-1 of the data the new data was made from
 * ('' to leave the data), the new data, the new progress ('' to leave it). Returns 0 when the
 * lock is not held or the job is gone, -1 when the data changed since it was read (read it
 * again), 1 when written.
 */
const WRITE_LOCKED_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
if ARGV[3] ~= '' then
  local data = redis.call('HGET', KEYS[2], 'data') or ''
  if redis.sha1hex(data) ~= ARGV[2] then return -1 end
  redis.call('HSET', KEYS[2], 'data', ARGV[3])
end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], 'progress', ARGV[4]) end
return 1
`;

/** Reads of a record's data before a write gives up on a record that keeps changing. */
const WRITE_TRIES = 10;

const optionalNumber = (value: string | null): number | undefined =>
  value ? Number(value) : undefined;

/** A record's fields from the hash, decoded as BullMQ decodes them (rawToJobJson). */
function fieldsOf(id: string, values: (string | null)[]): ImportJobFields {
  const v = Object.fromEntries(JOB_FIELDS.map((f, i) => [f, values[i]]));
  return {
    id,
    name: v.name ?? '',
    data: JSON.parse(v.data ?? '{}') as ImportJobFields['data'],
    progress: JSON.parse(v.progress ?? '0') as ImportJobFields['progress'],
    timestamp: Number(v.timestamp),
    processedOn: optionalNumber(v.processedOn),
    finishedOn: optionalNumber(v.finishedOn),
    attemptsStarted: Number(v.ats ?? 0),
    attemptsMade: Number(v.attemptsMade ?? v.atm ?? 0),
    failedReason: v.failedReason ?? '',
    returnvalue: v.returnvalue
      ? (JSON.parse(v.returnvalue) as ImportJobFields['returnvalue'])
      : undefined,
  };
}

/** Jobs of a page read per script call (each may hold an error of up to ~700 KB). */
const READ_CHUNK = 20;

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

type IndexClient = (Redis | Cluster) & {
  readImportJobs(...args: string[]): Promise<(string | null)[]>;
  writeLockedRecord(...args: string[]): Promise<number>;
};

interface ReadJob {
  id: string;
  job: ImportJobFields | undefined;
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
    redis: Redis | Cluster,
  ) {
    super();
    this.redis = redis as IndexClient;
    this.redis.defineCommand('readImportJobs', {
      numberOfKeys: 6,
      lua: READ_JOBS_LUA,
      readOnly: true,
    });
    this.redis.defineCommand('writeLockedRecord', { numberOfKeys: 2, lua: WRITE_LOCKED_LUA });
    // Reconnects by itself; the queue's own error logging reports an unreachable Redis.
    this.redis.on('error', () => undefined);
  }

  async catalogAccessions(jobIds: string[]): Promise<Map<string, string>> {
    if (jobIds.length === 0) return new Map();
    const pipeline = this.redis.pipeline();
    for (const id of jobIds) pipeline.hget(this.queue.toKey(id), 'data');
    const answers = (await pipeline.exec()) ?? [];
    const found = new Map<string, string>();
    answers.forEach(([, value], i) => {
      if (typeof value !== 'string') return;
      const accession = (JSON.parse(value) as ImportJobData).catalog?.accession;
      if (accession) found.set(jobIds[i], accession);
    });
    return found;
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
      for (const { id, job, jobState } of await this.readListed(ids)) {
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

  /**
   * Data fields are merged into the data as read, and written only if it is still what was
   * read (its SHA-1, compared in the script): a concurrent writer's fields are never lost.
   */
  async writeLocked(importId: string, lock: JobLock, write: RecordWrite): Promise<boolean> {
    const jobKey = this.queue.toKey(importId);
    // BullMQ's key of a job of another queue under the same prefix (the registration's).
    const lockKey = `${this.queue.opts.prefix ?? 'bull'}:${lock.queue}:${lock.jobId}:lock`;
    const progress = write.progress === undefined ? '' : JSON.stringify(write.progress);
    for (let tries = 0; tries < WRITE_TRIES; tries++) {
      let read = '';
      let data = '';
      if (write.data !== undefined) {
        const current = await this.redis.hget(jobKey, 'data');
        if (current === null) return false;
        read = createHash('sha1').update(current).digest('hex');
        data = JSON.stringify({ ...(JSON.parse(current) as ImportJobData), ...write.data });
      }
      const written = await this.redis.writeLockedRecord(
        lockKey,
        jobKey,
        lock.token,
        read,
        data,
        progress,
      );
      if (written !== -1) return written === 1;
    }
    throw new Error(`import ${importId}: its record kept changing while being written`);
  }

  async touched(jobId: string): Promise<void> {
    const [{ job, jobState }] = await this.read([jobId]);
    if (job) await this.file(job, recordStateOf(job, jobState));
  }

  async removed(jobId: string): Promise<void> {
    const [{ job }] = await this.read([jobId]);
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
    // eslint-disable-next-line no-restricted-syntax -- at most four parts
    return this.key(...(parts.length > 0 ? parts : ['all']));
  }

  /**
   * The jobs of a page, READ_CHUNK at a time, each cut to what a listing shows before the next
   * are read: a page of records with 1,000 problems each never sits whole in memory.
   */
  private async readListed(ids: string[]): Promise<ReadJob[]> {
    const read: ReadJob[] = [];
    for (let start = 0; start < ids.length; start += READ_CHUNK) {
      for (const entry of await this.read(ids.slice(start, start + READ_CHUNK))) {
        const error = entry.job?.data.error;
        if (error) error.details = boundedDetails(error.details, LISTED_DETAILS);
        read.push(entry);
      }
    }
    return read;
  }

  /** The jobs (the fields a record needs) and their BullMQ states, in one script call. */
  private async read(ids: string[]): Promise<ReadJob[]> {
    const k = this.queue.keys;
    const flat = await this.redis.readImportJobs(
      k.completed,
      k.failed,
      k.delayed,
      k.prioritized,
      k['waiting-children'],
      k.active,
      this.queue.toKey(''),
      // eslint-disable-next-line no-restricted-syntax -- a page's ids (at most per_page, 200)
      ...ids,
    );
    const stride = JOB_FIELDS.length + 1;
    return ids.map((id, i) => {
      const jobState = flat[i * stride]!;
      const values = flat.slice(i * stride + 1, (i + 1) * stride);
      const known =
        jobState !== 'unknown' && IMPORT_KINDS.includes(values[0] as ImportJobName.Dataset);
      return { id, job: known ? fieldsOf(id, values) : undefined, jobState };
    });
  }

  /** Adds a job to the sets of its record state (and to the all and source sets). */
  private stageAdd(batch: ChainableCommander, job: ImportJobFields, state: ImportState): void {
    const { source } = job.data;
    const score = job.timestamp;
    batch.zadd(this.key('all'), score, job.id!);
    batch.zadd(this.key('source', source), score, job.id!);
    batch.zadd(this.key('state', state), score, job.id!);
    batch.zadd(this.key('source', source, 'state', state), score, job.id!);
  }

  /** Removes a job from every state set (of its source too), then files it under `state`. */
  private stage(multi: ChainableCommander, job: ImportJobFields, state: ImportState): void {
    for (const s of IMPORT_STATES) {
      multi.zrem(this.key('state', s), job.id!);
      multi.zrem(this.key('source', job.data.source, 'state', s), job.id!);
    }
    this.stageAdd(multi, job, state);
  }

  /** Files a job under its record state (and nowhere else), atomically. */
  private async file(job: ImportJobFields, state: ImportState): Promise<void> {
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

  /**
   * Indexes every import job of a queue that has none yet (a queue older than the index): the
   * ids of each BullMQ state a chunk at a time, read with the same script as pages.
   */
  private async buildOnce(): Promise<void> {
    if ((await this.redis.get(this.key('version'))) === INDEX_VERSION) return;
    for (const jobState of JOB_STATES) {
      for (let start = 0; ; start += BUILD_CHUNK) {
        const ids = await this.queue.getRanges(
          [jobState as JobType],
          start,
          start + BUILD_CHUNK - 1,
          true,
        );
        if (ids.length === 0) break;
        const batch = this.redis.pipeline();
        for (const { job, jobState: now } of await this.read(ids))
          if (job) this.stageAdd(batch, job, recordStateOf(job, now));
        await batch.exec();
        if (ids.length < BUILD_CHUNK) break;
      }
    }
    await this.redis.set(this.key('version'), INDEX_VERSION);
  }
}
