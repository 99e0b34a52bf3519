import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConflictError, ServiceUnavailableError } from '@app/errors';
import { DataSource, EntityManager } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { AuditRepository, ChainPoint, ChainRange, RangeCheck } from './audit.repository';
import { AuditSigner, CheckpointClaims } from './audit-signer';

/** Entries checked per statement: a few MB of hashing, a statement well under its time-out. */
const VERIFY_BATCH = 100_000;
/**
 * Statements checking ranges at once, each on its own connection in the one snapshot: hashing
 * is the database's CPU, and every entry is checked against stored values only (its own hash,
 * the hash stored before it), so ranges are independent. Bounded by the pool less the
 * snapshot's own connection.
 */
const VERIFY_PARALLEL = 4;
const GENESIS: ChainPoint = { seq: '0', hash: Buffer.alloc(32) };

export type ChainProblem = 'hash' | 'gap' | 'link' | 'unanchored' | 'checkpoint' | 'head';

const PROBLEMS: Record<ChainProblem, string> = {
  hash: 'its hash does not match its contents (the entry was edited)',
  gap: 'its position does not follow the entry before (entries are missing)',
  link: 'its previous hash is not the hash of the entry before (an entry before was replaced)',
  unanchored: 'the entries before it are gone and no signed checkpoint vouches for them',
  checkpoint: 'the signed checkpoint before it does not verify',
  head: 'the chain head names an entry that is missing or different (entries at the end are gone)',
};

export interface TrailVerification {
  ok: boolean;
  /** Entries checked. */
  entries: number;
  /** Where checking started: position 0 (the start) or a signed pruning checkpoint. */
  from: { seq: string; checkpoint: boolean };
  head: { seq: string; hash: string };
  /** The first entry that breaks the chain. */
  broken?: { id: string; problem: ChainProblem; message: string };
}

/** How `verify` splits the work (tests make ranges small to cross their boundaries). */
export interface VerifyOptions {
  batch?: number;
  parallel?: number;
}

export interface SignedHead {
  claims: CheckpointClaims;
  /** Compact JWS of `claims`; absent when no signing key is set. */
  jws?: string;
  kid?: string;
}

const hex = (hash: Buffer) => hash.toString('hex');

/**
 * Checking, checkpointing and pruning the trail. Appending is the database's (the chain
 * trigger), whoever inserts: `AuditService.record*` and reported events.
 */
@Injectable()
export class AuditTrailService {
  private readonly logger = new Logger(AuditTrailService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly entries: AuditRepository,
    private readonly signer: AuditSigner,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /**
   * Checks the whole chain in one snapshot (REPEATABLE READ, so appends and pruning meanwhile
   * change nothing it sees), from the start or the signed checkpoint the oldest entry follows,
   * to the head; names the first entry that breaks it. The positions are checked in ranges of
   * `batch`, up to `parallel` at once on connections that share the snapshot
   * (`pg_export_snapshot`); the first broken entry is the lowest any range names.
   */
  verify(
    onProgress?: (checked: number) => void,
    options: VerifyOptions = {},
  ): Promise<TrailVerification> {
    const batch = options.batch ?? VERIFY_BATCH;
    const parallel = Math.max(
      0,
      Math.min(options.parallel ?? VERIFY_PARALLEL, this.settings.DATABASE_POOL_SIZE - 1),
    );
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const snapshot = parallel > 0 ? await this.entries.exportSnapshot(manager) : undefined;
      const head = await this.entries.head(manager);
      const span = await this.entries.span(manager);
      const baseSeq = span === undefined ? head.seq : String(BigInt(span.first) - 1n);
      const result: TrailVerification = {
        ok: true,
        entries: 0,
        from: { seq: baseSeq, checkpoint: baseSeq !== '0' },
        head: { seq: head.seq, hash: hex(head.hash) },
      };
      const broken = (id: string, problem: ChainProblem) => {
        result.ok = false;
        result.broken = { id, problem, message: PROBLEMS[problem] };
        return result;
      };
      const firstAfterBase = BigInt(baseSeq) + 1n;
      let start = GENESIS;
      if (baseSeq !== '0') {
        const anchor = await this.anchor(manager, baseSeq);
        if (anchor === 'unanchored' || anchor === 'checkpoint')
          return broken(String(firstAfterBase), anchor);
        start = anchor;
      }
      const ranges: ChainRange[] = [];
      const last = span === undefined ? firstAfterBase - 1n : BigInt(span.last);
      for (let from = firstAfterBase; from <= last; from += BigInt(batch)) {
        const to = from + BigInt(batch) - 1n;
        ranges.push({
          from: String(from),
          to: String(to < last ? to : last),
          // The first range follows the anchor; the others the entry stored before them.
          before: from === firstAfterBase ? start.hash : undefined,
        });
      }
      const check = (range: ChainRange) =>
        snapshot === undefined
          ? this.entries.checkRange(manager, range)
          : this.dataSource.transaction('REPEATABLE READ', async (m) => {
              await this.entries.useSnapshot(m, snapshot);
              return this.entries.checkRange(m, range);
            });
      const firstBroken = await checkInOrder(ranges, Math.max(1, parallel), check, (n) => {
        result.entries += n;
        onProgress?.(result.entries);
      });
      if (firstBroken !== undefined) return broken(firstBroken.id, firstBroken.problem);
      const end = span === undefined ? start : await this.entries.pointAt(manager, span.last);
      if (end === undefined || end.seq !== head.seq || !end.hash.equals(head.hash)) {
        return broken(String(BigInt(end?.seq ?? start.seq) + 1n), 'head');
      }
      return result;
    });
  }

  /** The signed head, for an export: an auditor checks the exported entries against it. */
  async signedHead(manager: EntityManager = this.dataSource.manager): Promise<SignedHead> {
    const head = await this.entries.head(manager);
    const claims: CheckpointClaims = {
      seq: head.seq,
      hash: hex(head.hash),
      at: head.at?.toISOString() ?? null,
      purpose: 'export',
      signed_at: new Date().toISOString(),
    };
    if (!this.signer.enabled) return { claims };
    return { claims, ...(await this.signer.sign(claims)) };
  }

  /**
   * Deletes the entries chained before `before` (default: AUDIT_RETENTION_DAYS ago) once the
   * whole chain verifies, after signing a checkpoint of the last one deleted, in one
   * transaction: a crash leaves either both or neither.
   */
  async prune(
    before?: Date,
  ): Promise<{ pruned: number; checkpoint?: { seq: string; hash: string } }> {
    if (!this.signer.enabled) {
      throw new ServiceUnavailableError(
        'Pruning needs AUDIT_SIGNING_KEY_FILE: the checkpoint that keeps the chain verifiable is signed',
      );
    }
    const days = this.settings.AUDIT_RETENTION_DAYS;
    if (before === undefined && days === undefined) return { pruned: 0 };
    const cutoff = before ?? new Date(Date.now() - (days as number) * 86_400_000);
    const check = await this.verify();
    if (!check.ok) {
      throw new ConflictError(
        `The trail does not verify (entry ${check.broken?.id}); nothing was pruned`,
        { broken: check.broken },
      );
    }
    return this.dataSource.transaction(async (manager) => {
      const last = await this.entries.lastBefore(manager, cutoff);
      if (last === undefined) return { pruned: 0 };
      const claims: CheckpointClaims = {
        seq: last.seq,
        hash: hex(last.hash),
        at: last.at.toISOString(),
        purpose: 'prune',
        signed_at: new Date().toISOString(),
      };
      const { jws, kid } = await this.signer.sign(claims);
      await this.entries.saveCheckpoint(manager, {
        seq: last.seq,
        hash: last.hash,
        entry_at: last.at,
        key_id: kid,
        jws,
      });
      const pruned = await this.entries.pruneThrough(manager, last.seq);
      this.logger.log({ pruned, through: last.seq }, 'audit trail pruned');
      return { pruned, checkpoint: { seq: claims.seq, hash: claims.hash } };
    });
  }

  /** The point a pruned chain continues from, once its checkpoint's signature holds. */
  private async anchor(
    manager: EntityManager,
    seq: string,
  ): Promise<ChainPoint | 'unanchored' | 'checkpoint'> {
    const checkpoint = await this.entries.checkpointAt(manager, seq);
    if (checkpoint === undefined) return 'unanchored';
    if (!this.signer.enabled) {
      throw new ServiceUnavailableError(
        'The trail was pruned: checking its checkpoint needs AUDIT_SIGNING_KEY_FILE',
      );
    }
    try {
      const claims = await this.signer.verify(checkpoint.jws);
      if (claims.seq !== seq || claims.hash !== hex(checkpoint.hash)) return 'checkpoint';
    } catch {
      return 'checkpoint';
    }
    return { seq, hash: checkpoint.hash };
  }
}

/**
 * Runs `check` on every range, up to `parallel` at once, in order of their start, and returns
 * the first broken entry of the earliest range that has one. Once a range is broken, ranges
 * after it are not started (their answer could not come first).
 */
async function checkInOrder(
  ranges: ChainRange[],
  parallel: number,
  check: (range: ChainRange) => Promise<RangeCheck>,
  onChecked: (entries: number) => void,
): Promise<RangeCheck['broken']> {
  const found: RangeCheck['broken'][] = new Array<RangeCheck['broken']>(ranges.length);
  let next = 0;
  let stopAt = ranges.length;
  const worker = async () => {
    while (next < stopAt) {
      const index = next++;
      const answer = await check(ranges[index]);
      onChecked(answer.entries);
      if (answer.broken !== undefined) {
        found[index] = answer.broken;
        stopAt = Math.min(stopAt, index);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, ranges.length) }, worker));
  return found.find((broken) => broken !== undefined);
}
