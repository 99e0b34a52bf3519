import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '@app/auth';
import { AuditTrailService } from '../src/audit/audit-trail.service';
import { runCli } from '../src/cli/run-cli';
import { buildTypeOrmOptions } from '../src/typeorm-options';
import { DemoCatalog, startDemoCatalog } from './demo-catalog.fixture';

const REGISTRATION_KEY = generateApiKey(48);

/** The trail's signing key, as an operator makes it (`openssl genpkey -algorithm ed25519`). */
function keyFile(dir: string, name: string): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  const file = join(dir, name);
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  return file;
}

describe('the audit trail: one hash-chained, append-only log', () => {
  let c: DemoCatalog;
  let dir: string;
  let signingKey: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-trail-'));
    signingKey = keyFile(dir, 'trail-key.pem');
    c = await startDemoCatalog({
      REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
      AUDIT_SIGNING_KEY_FILE: signingKey,
    });
  });
  afterAll(() => c.close());

  async function cli(env: Record<string, string>, ...argv: string[]) {
    let out = '';
    let err = '';
    const code = await runCli(
      argv,
      { DATABASE_URL: c.databaseUrl, CATALOG_CLI_USER: 'auditor', ...env },
      { out: (t) => (out += t), err: (t) => (err += t), cwd: dir },
    );
    return { code, out, err };
  }
  const trail = (...argv: string[]) =>
    cli({ AUDIT_SIGNING_KEY_FILE: signingKey }, 'trail', ...argv);
  const one = async <T>(sql: string, params: unknown[] = []) =>
    (await c.dataSource.query<T[]>(sql, params))[0];
  /** What a database owner can do and the application cannot: write past the trigger. */
  const asOwner = async (sql: string, params: unknown[] = []) => {
    await c.dataSource.transaction(async (m) => {
      await m.query('ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only');
      await m.query(sql, params);
      await m.query('ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only');
    });
  };
  const grant = (user: string) =>
    cli({}, 'grant', '--user', user, '--object-type', 'project', '--object', 'EPIC-DREM');

  it('chains every write, positions 1..n without gaps, and verifies', async () => {
    expect((await grant('roy.blue')).code).toBe(0);
    const chain = await one<{ n: number; max: string; linked: number }>(
      `SELECT count(*)::int AS n, max(id)::text AS max,
              count(*) FILTER (WHERE prev_hash = coalesce(
                (SELECT hash FROM audit_log b WHERE b.id = a.id - 1), decode(repeat('00', 32), 'hex')))::int AS linked
       FROM audit_log a`,
    );
    expect(chain.n).toBeGreaterThan(1);
    expect(chain).toEqual({ n: chain.n, max: String(chain.n), linked: chain.n });
    const verified = await trail('verify');
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.out)).toMatchObject({
      ok: true,
      entries: chain.n,
      from: { seq: '0', checkpoint: false },
      head: { seq: String(chain.n) },
    });
  });

  it('refuses updates and deletes from the application', async () => {
    await expect(
      c.dataSource.query(`UPDATE audit_log SET action = 'x' WHERE id = 1`),
    ).rejects.toThrow(/append-only \(UPDATE refused\)/);
    await expect(c.dataSource.query(`DELETE FROM audit_log WHERE id = 1`)).rejects.toThrow(
      /append-only \(DELETE refused\)/,
    );
  });

  it('names the first entry edited in the database, and holds again once it is put back', async () => {
    const { id, change } = await one<{ id: string; change: object }>(
      `SELECT id::text AS id, change FROM audit_log WHERE action = 'grant' ORDER BY id DESC LIMIT 1`,
    );
    await asOwner(`UPDATE audit_log SET change = change || '{"user": "mallory"}' WHERE id = $1`, [
      id,
    ]);
    const broken = await trail('verify');
    expect(broken.code).toBe(1);
    expect(broken.err).toContain(
      `The trail is broken at entry ${id}: its hash does not match its contents`,
    );

    await asOwner(`UPDATE audit_log SET change = $2 WHERE id = $1`, [id, change]);
    expect((await trail('verify')).code).toBe(0);
  });

  it('names a replaced entry (hash recomputed to match) by the link of the one after', async () => {
    await grant('alice.white');
    const { id } = await one<{ id: string }>(`SELECT (max(id) - 1)::text AS id FROM audit_log`);
    const saved = await one<{ action: string; hash: Buffer }>(
      `SELECT action, hash FROM audit_log WHERE id = $1`,
      [id],
    );
    await asOwner(`UPDATE audit_log SET action = 'forged' WHERE id = $1`, [id]);
    await asOwner(
      `UPDATE audit_log a SET hash = sha256(prev_hash || convert_to(audit_log_body(a), 'UTF8')) WHERE id = $1`,
      [id],
    );
    const broken = await trail('verify');
    expect(broken.err).toContain(
      `broken at entry ${String(Number(id) + 1)}: its previous hash is not the hash of the entry before`,
    );
    await asOwner(`UPDATE audit_log SET action = $2, hash = $3 WHERE id = $1`, [
      id,
      saved.action,
      saved.hash,
    ]);
    expect((await trail('verify')).code).toBe(0);
  });

  it('checks in ranges, several at once in one snapshot, and names the same entry wherever the ranges fall', async () => {
    const service = c.app.get(AuditTrailService);
    // Ranges of 3 (1-3, 4-6, 7-9, ...), 3 at once: entry 7 starts a range, entry 6 ends one.
    const bothWays = async () => {
      const whole = await service.verify();
      const ranged = await service.verify(undefined, { batch: 3, parallel: 3 });
      const { entries: _e, ...found } = ranged;
      const { entries: _w, ...expected } = whole;
      expect(found).toEqual(expected);
      return ranged;
    };
    const intact = await bothWays();
    expect(intact).toMatchObject({ ok: true });
    expect(intact.entries).toBeGreaterThan(9);
    expect((await service.verify(undefined, { batch: 3, parallel: 3 })).entries).toBe(
      intact.entries,
    );
    const broken = async () => (await bothWays()).broken;

    // An entry edited at the start of a range.
    const seven = await one<{ change: object }>('SELECT change FROM audit_log WHERE id = 7');
    await asOwner(`UPDATE audit_log SET change = change || '{"x": 1}' WHERE id = 7`);
    expect(await broken()).toMatchObject({ id: '7', problem: 'hash' });
    await asOwner('UPDATE audit_log SET change = $1 WHERE id = 7', [seven.change]);

    // An entry replaced at the end of a range: the next range's first entry names it.
    const six = await one<{ row: object; action: string; hash: Buffer }>(
      'SELECT row_to_json(a) AS row, action, hash FROM audit_log a WHERE id = 6',
    );
    await asOwner(`UPDATE audit_log SET action = 'forged' WHERE id = 6`);
    await asOwner(
      `UPDATE audit_log a SET hash = sha256(prev_hash || convert_to(audit_log_body(a), 'UTF8')) WHERE id = 6`,
    );
    expect(await broken()).toMatchObject({ id: '7', problem: 'link' });
    await asOwner('UPDATE audit_log SET action = $1, hash = $2 WHERE id = 6', [
      six.action,
      six.hash,
    ]);

    // An entry removed at the end of a range: the next range's first entry follows nothing.
    await asOwner('DELETE FROM audit_log WHERE id = 6');
    expect(await broken()).toMatchObject({ id: '7', problem: 'gap' });
    await c.dataSource.transaction(async (m) => {
      await m.query('ALTER TABLE audit_log DISABLE TRIGGER USER');
      await m.query(
        'INSERT INTO audit_log SELECT * FROM json_populate_record(NULL::audit_log, $1)',
        [six.row],
      );
      await m.query('ALTER TABLE audit_log ENABLE TRIGGER USER');
    });
    expect(await bothWays()).toMatchObject({ ok: true });
  });

  it('one order across replicas: concurrent writers from separate pools take positions one at a time', async () => {
    const replicas = await Promise.all(
      [0, 1, 2].map(async () => {
        const ds = new DataSource(
          buildTypeOrmOptions({ DATABASE_URL: c.databaseUrl, DATABASE_POOL_SIZE: 4 }),
        );
        return ds.initialize();
      }),
    );
    try {
      const before = await one<{ seq: string }>('SELECT seq::text AS seq FROM audit_log_head');
      const writes = replicas.flatMap((ds, r) =>
        Array.from({ length: 20 }, (_, n) =>
          ds
            .transaction(async (m) => {
              await m.query(
                `INSERT INTO audit_log (actor_kind, action, object_type, object_id) VALUES ('system', 'test', 'replica', $1)`,
                [`${r}-${n}`],
              );
              // Every fifth transaction rolls back: its position must be given back.
              if (n % 5 === 4) throw new Error('rolled back');
            })
            .catch((error: Error) => {
              if (error.message !== 'rolled back') throw error;
            }),
        ),
      );
      await Promise.all(writes);
      const after = await one<{ seq: string }>('SELECT seq::text AS seq FROM audit_log_head');
      expect(Number(after.seq) - Number(before.seq)).toBe(3 * 16);
      const rows = await c.dataSource.query<{ id: string }[]>(
        `SELECT a.id::text AS id FROM audit_log a WHERE a.id > $1 ORDER BY a.id`,
        [before.seq],
      );
      expect(rows.map((r) => Number(r.id))).toEqual(
        Array.from({ length: 48 }, (_, n) => Number(before.seq) + 1 + n),
      );
      expect((await trail('verify')).code).toBe(0);
    } finally {
      await Promise.all(replicas.map((ds) => ds.destroy()));
    }
  });

  it('chains many entries of one transaction, and gives back the positions of a rolled-back savepoint', async () => {
    const before = await one<{ seq: string }>('SELECT seq::text AS seq FROM audit_log_head');
    await c.dataSource.transaction(async (m) => {
      const insert = (n: number, what: string) =>
        m.query(
          `INSERT INTO audit_log (actor_kind, action, object_type, object_id)
           SELECT 'system', 'test', $2, g::text FROM generate_series(1, $1) g`,
          [n, what],
        );
      await insert(20_000, 'bulk');
      await m.query('SAVEPOINT s');
      await insert(5, 'undone');
      await m.query('ROLLBACK TO SAVEPOINT s');
      await insert(1, 'after');
    });
    const after = await one<{ seq: string }>('SELECT seq::text AS seq FROM audit_log_head');
    expect(Number(after.seq) - Number(before.seq)).toBe(20_001);
    expect(await one(`SELECT id::text AS id FROM audit_log WHERE object_type = 'after'`)).toEqual({
      id: after.seq,
    });
    expect((await trail('verify')).code).toBe(0);
  });

  it('nothing lost or half-written when a writer dies mid-transaction', async () => {
    const before = await one<{ seq: string }>('SELECT seq::text AS seq FROM audit_log_head');
    const dying = new Client({ connectionString: c.databaseUrl });
    await dying.connect();
    dying.on('error', () => undefined);
    await dying.query('BEGIN');
    await dying.query(
      `INSERT INTO audit_log (actor_kind, action, object_type) VALUES ('system', 'test', 'dying')`,
    );
    const [{ pid }] = (await dying.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    // Another writer waits on the head meanwhile, then takes the position the dead one held.
    const waiting = c.dataSource.query(
      `INSERT INTO audit_log (actor_kind, action, object_type) VALUES ('system', 'test', 'survivor') RETURNING id::text AS id`,
    );
    await c.dataSource.query('SELECT pg_terminate_backend($1)', [pid]);
    const [survivor] = (await waiting) as { id: string }[];
    await dying.end().catch(() => undefined);
    expect(survivor.id).toBe(String(Number(before.seq) + 1));
    expect(
      await one(`SELECT count(*)::int AS n FROM audit_log WHERE object_type = 'dying'`),
    ).toEqual({
      n: 0,
    });
    expect((await trail('verify')).code).toBe(0);
  });

  it('records reported provisioner events once each, with the registration key only', async () => {
    const event = {
      id: randomUUID(),
      type: 'drs_object.serve',
      occurred_at: '2026-11-26T10:00:00.123Z',
      object_id: 'ds-123',
      subject: 'roy.blue@example.org',
      dataset: 'ELU_I_77',
      visa: randomUUID(),
      range_start: 0,
      bytes: 1024,
    };
    const refused = { ...event, id: randomUUID(), type: 'drs_object.refuse', reason: 'no visa' };
    const report = (events: unknown[], key = REGISTRATION_KEY) =>
      request(c.server).post('/api/trail/events').set('X-API-Key', key).send({ events });
    expect((await report([event, refused]).expect(200)).body).toEqual({ recorded: 2, already: 0 });
    expect((await report([event, refused]).expect(200)).body).toEqual({ recorded: 0, already: 2 });
    const rows = await c.dataSource.query<object[]>(
      `SELECT actor_kind, action, object_type, object_id, change FROM audit_log
       WHERE event_id = ANY($1) ORDER BY id`,
      [[event.id, refused.id]],
    );
    expect(rows).toEqual([
      {
        actor_kind: 'registrar',
        action: 'serve',
        object_type: 'drs_object',
        object_id: 'ds-123',
        change: {
          occurred_at: event.occurred_at,
          subject: event.subject,
          dataset: 'ELU_I_77',
          visa: event.visa,
          range_start: 0,
          bytes: 1024,
        },
      },
      expect.objectContaining({
        action: 'refuse',
        change: expect.objectContaining({ reason: 'no visa' }),
      }),
    ]);

    const bad = await report([{ ...event, id: 'not-a-uuid', type: 'drs_object.delete' }]).expect(
      400,
    );
    expect(bad.body.more.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: expect.stringContaining('id') }),
        expect.objectContaining({ field: expect.stringContaining('type') }),
      ]),
    );
    await report([]).expect(400);
    await request(c.server)
      .post('/api/trail/events')
      .send({ events: [event] })
      .expect(401);
    await report([{ ...event, id: randomUUID() }], 'wrong-key-0123456789abcdef0123456789').expect(
      401,
    );
    expect((await trail('verify')).code).toBe(0);
  });

  it('prunes behind a signed checkpoint and still verifies; a forged checkpoint is named', async () => {
    const head = await one<{ seq: string }>('SELECT seq::text AS seq FROM audit_log_head');
    const unsigned = await cli({}, 'trail', 'prune', '--before', new Date().toISOString());
    expect(unsigned.code).toBe(2);
    expect(unsigned.err).toContain('AUDIT_SIGNING_KEY_FILE');

    const cut = await one<{ at: Date; id: string }>(
      `SELECT at, id::text AS id FROM audit_log WHERE id = $1`,
      [String(Number(head.seq) - 3)],
    );
    const pruned = await trail('prune', '--before', new Date(cut.at.getTime() + 1).toISOString());
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.out)).toMatchObject({
      pruned: Number(cut.id),
      checkpoint: { seq: cut.id },
    });
    expect(await one('SELECT min(id)::text AS id FROM audit_log')).toEqual({
      id: String(Number(cut.id) + 1),
    });
    const verified = await trail('verify');
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.out)).toMatchObject({
      ok: true,
      entries: 3,
      from: { seq: cut.id, checkpoint: true },
    });

    // A checkpoint signed with another key does not vouch for the pruned entries.
    const otherKey = keyFile(dir, 'other-key.pem');
    const other = await cli({ AUDIT_SIGNING_KEY_FILE: otherKey }, 'trail', 'verify');
    expect(other.code).toBe(1);
    expect(other.err).toContain(
      `broken at entry ${Number(cut.id) + 1}: the signed checkpoint before it does not verify`,
    );
    // Nor does a checkpoint whose hash was changed.
    await c.dataSource.query(`UPDATE audit_checkpoints SET hash = sha256(hash) WHERE seq = $1`, [
      cut.id,
    ]);
    expect((await trail('verify')).err).toContain(`broken at entry ${Number(cut.id) + 1}`);
  });
});
