import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactVerify, importJWK } from 'jose';
// The RO-Crate library of the Language Research Technology group (ro-crate-js): an
// implementation independent of ours, reading the crate as any consumer would.
import * as roCrate from 'ro-crate';
import type { Validator as CrateValidator } from 'ro-crate/dist/lib/validator';
import request from 'supertest';
import { fromBuffer, type Entry, type ZipFile } from 'yauzl';
import { generateApiKey, hashApiKey } from '@app/auth';
import { AuditCrateRepository } from '../src/audit-crate/audit-crate.repository';
import { AuditCrateService, CRATE_WINDOW } from '../src/audit-crate/audit-crate.service';
import { OUTPUT_COLUMNS } from '../src/audit-crate/crate-entities';
import { runCli } from '../src/cli/run-cli';
import { DemoCatalog, KeyName, startDemoCatalog } from './demo-catalog.fixture';

// The package exports its Validator, which its type declarations leave out.
const { Validator } = roCrate as unknown as { Validator: typeof CrateValidator };
const REGISTRATION_KEY = generateApiKey(48);
const PROJECT = 'PD-OMICS';
const PROFILE = 'https://w3id.org/5s-crate/0.4';
const DUO = (n: string) => `http://purl.obolibrary.org/obo/DUO_${n}`;

type GraphEntity = Record<string, unknown> & { '@id': string; '@type': string | string[] };

/** Every file of a ZIP, by path, read with yauzl (the reader of the writer's author). */
function unzip(zip: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    fromBuffer(zip, { lazyEntries: true }, (error, file: ZipFile) => {
      if (error) return reject(error);
      const files = new Map<string, Buffer>();
      file.on('entry', (entry: Entry) => {
        file.openReadStream(entry, (openError, stream) => {
          if (openError) return reject(openError);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            files.set(entry.fileName, Buffer.concat(chunks));
            file.readEntry();
          });
        });
      });
      file.on('end', () => resolve(files));
      file.on('error', reject);
      file.readEntry();
    });
  });
}

const sha512 = (bytes: Buffer) => createHash('sha512').update(bytes).digest('hex');

/** `<sha512>  <path>` lines as a map. */
const manifest = (text: string) =>
  new Map(
    text
      .trim()
      .split('\n')
      .map((line) => {
        const [sum, path] = line.split(/ {2}/);
        return [path, sum] as const;
      }),
  );

describe('GET /api/projects/{acronym}/audit-crate: the auditor’s Five Safes RO-Crate', () => {
  let c: DemoCatalog;
  let dir: string;
  let signingKey: string;
  let datasets: { id: number; accession: string }[];
  let otherAccession: string;
  let files: Map<string, Buffer>;
  let bag: string;
  let graph: GraphEntity[];
  const served: { id: string; subject: string; range_start: number; bytes: number }[] = [];

  const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => callback(null, Buffer.concat(chunks)));
  };
  /** `key` null: no key at all. */
  const crate = (acronym = PROJECT, key: KeyName | null = 'global') =>
    c
      .get(`/api/projects/${encodeURIComponent(acronym)}/audit-crate`, key ?? undefined)
      .buffer(true)
      .parse(binary);
  const report = (events: object[]) =>
    request(c.server)
      .post('/api/trail/events')
      .set('X-API-Key', REGISTRATION_KEY)
      .send({ events })
      .expect(200);
  const entity = (id: string) => graph.find((e) => e['@id'] === id) as GraphEntity;
  const ofType = (type: string) =>
    graph.filter((e) => ([] as string[]).concat(e['@type']).includes(type));
  const file = (path: string) => files.get(`${bag}/${path}`) as Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-crate-'));
    signingKey = join(dir, 'trail-key.pem');
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(signingKey, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    c = await startDemoCatalog({
      REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
      AUDIT_SIGNING_KEY_FILE: signingKey,
      ACCESSREQ_INTEGRATION_ENABLED: 'true',
      ACCESSREQ_ALLOWED_IP_ADDRESSES: '127.0.0.1',
    });
    datasets = await c.dataSource.query(
      `SELECT d.id, d.elu_accession AS accession FROM datasets d JOIN projects p ON p.id = d.project_id
       WHERE p.acronym = $1 ORDER BY d.id`,
      [PROJECT],
    );
    [{ accession: otherAccession }] = await c.dataSource.query(
      `SELECT d.elu_accession AS accession FROM datasets d JOIN projects p ON p.id = d.project_id
       WHERE p.acronym <> $1 AND d.elu_accession IS NOT NULL ORDER BY d.id LIMIT 1`,
      [PROJECT],
    );
    // A DRS copy of the first dataset, as the provisioner registers it.
    await c.dataSource.query(
      `INSERT INTO storage_locations (dataset_id, platform, location, byte_size, manifest_sha256, drs_uri)
       VALUES ($1, 'S3', 's3://bucket/pd-omics', 4096, $2, 'drs://drs.example.org/pd-omics-1')`,
      [datasets[0].id, 'a'.repeat(64)],
    );
    // A grant through REMS (the entitlement webhook), then two byte ranges read by that person
    // and one read of another project's dataset, as the provisioner reports them.
    await request(c.server)
      .post('/api/accessreq')
      .send([
        {
          application: 77,
          resource: datasets[0].accession,
          user: 'sub-auditee',
          mail: 'auditee@uni.example',
          end: '2031-01-31T23:59:59.000Z',
        },
      ])
      .expect(200);
    for (const [n, range] of [
      [0, 1024],
      [1024, 3072],
    ]) {
      served.push({
        id: randomUUID(),
        subject: 'sub-auditee',
        range_start: range,
        bytes: 1024 * (n + 1),
      });
    }
    await report([
      ...served.map((s) => ({
        id: s.id,
        type: 'drs_object.serve',
        occurred_at: '2026-11-26T10:00:00.000Z',
        object_id: 'pd-omics-1',
        subject: s.subject,
        dataset: datasets[0].accession,
        visa: randomUUID(),
        range_start: s.range_start,
        bytes: s.bytes,
      })),
      {
        id: randomUUID(),
        type: 'drs_object.serve',
        occurred_at: '2026-11-26T10:00:00.000Z',
        object_id: 'elsewhere-1',
        subject: 'sub-other',
        dataset: otherAccession,
        range_start: 0,
        bytes: 1,
      },
    ]);

    const res = await crate().expect(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="PD-OMICS-audit-crate-\d{4}-\d{2}-\d{2}\.zip"$/,
    );
    expect(res.headers.link).toBe('<https://w3id.org/ro/crate>; rel="profile"');
    files = await unzip(res.body as Buffer);
    bag = [...files.keys()][0].split('/')[0];
    graph = JSON.parse(file('data/ro-crate-metadata.json').toString('utf8'))['@graph'];
  });
  afterAll(() => c.close());

  describe('who may ask (admin key only)', () => {
    it('refuses no key with 401, other key kinds with 403, an unknown project with 404', async () => {
      const anonymous = await crate(PROJECT, null).expect(401);
      expect(JSON.parse(anonymous.body.toString())).toMatchObject({
        status: 'Error',
        description: 'API key required',
      });
      // A user key (a custodian of the project, a data steward) and an endpoint key.
      for (const key of ['custodian', 'steward', 'catalogEndpoint'] as KeyName[]) {
        const refused = await crate(PROJECT, key).expect(403);
        expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(JSON.parse(refused.body.toString())).toMatchObject({ status: 'Error' });
      }
      const unknown = await crate('NO-SUCH-PROJECT').expect(404);
      expect(JSON.parse(unknown.body.toString())).toEqual({
        status: 'Error',
        description: 'No project with acronym NO-SUCH-PROJECT',
        more: {},
      });
      await request(c.server)
        .get(`/api/projects/${PROJECT}/audit-crate`)
        .set('X-API-Key', 'not-a-key-0123456789abcdef0123456789')
        .expect(401);
    });
  });

  describe('the bag (Five Safes RO-Crate 0.4: BagIt 1.0 in one folder of a ZIP)', () => {
    it('has one top-level folder with the bag declaration, bag-info and sha-512 manifests', () => {
      expect(new Set([...files.keys()].map((path) => path.split('/')[0]))).toEqual(new Set([bag]));
      expect([...files.keys()].map((path) => path.slice(bag.length + 1)).sort()).toEqual([
        'bag-info.txt',
        'bagit.txt',
        'data/outputs/byte-ranges.csv',
        'data/ro-crate-metadata.json',
        'data/trail/entries.jsonl',
        'data/trail/head.json',
        'manifest-sha512.txt',
        'tagmanifest-sha512.txt',
      ]);
      expect(file('bagit.txt').toString()).toBe(
        'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
      );
      const info = file('bag-info.txt').toString();
      expect(info).toMatch(/^External-Identifier: urn:uuid:[0-9a-f-]{36}$/m);
      const payload = [...files.keys()].filter((path) => path.startsWith(`${bag}/data/`));
      const octets = payload.reduce((sum, path) => sum + (files.get(path) as Buffer).length, 0);
      expect(info).toContain(`Payload-Oxum: ${octets}.${payload.length}\n`);
    });

    it('lists every payload file, and every tag file, with its true sha-512', () => {
      const payload = manifest(file('manifest-sha512.txt').toString());
      expect([...payload.keys()].sort()).toEqual([
        'data/outputs/byte-ranges.csv',
        'data/ro-crate-metadata.json',
        'data/trail/entries.jsonl',
        'data/trail/head.json',
      ]);
      for (const [path, sum] of payload) expect([path, sha512(file(path))]).toEqual([path, sum]);
      const tags = manifest(file('tagmanifest-sha512.txt').toString());
      expect([...tags.keys()].sort()).toEqual(['bag-info.txt', 'bagit.txt', 'manifest-sha512.txt']);
      for (const [path, sum] of tags) expect([path, sha512(file(path))]).toEqual([path, sum]);
    });
  });

  describe('the RO-Crate', () => {
    it('is a valid RO-Crate 1.2 for ro-crate-js, with a data entity for every payload file', () => {
      const validator = new Validator(null);
      validator.parseJSON(file('data/ro-crate-metadata.json').toString('utf8'));
      // The context check fetches it over the network: the entity checks are the rest.
      validator.rootDataEntity();
      const present: Record<string, { exists: boolean; isDir: boolean }> = {};
      for (const path of files.keys()) {
        const inData = path.slice(`${bag}/data/`.length);
        if (path.startsWith(`${bag}/data/`) && inData !== 'ro-crate-metadata.json')
          present[inData] = { exists: true, isDir: false };
      }
      validator.checkFiles(present, undefined);
      const results = validator.results as { status: string; id: string; message: string }[];
      expect(results.filter((r) => r.status !== 'success')).toEqual([]);
      expect(results.map((r) => r.id)).toEqual(
        expect.arrayContaining(['validCrateMustBeJson', 'nameRequired', 'licenseRequired']),
      );
    });

    it("has the profile's required entities: descriptor, root, profile, CreateAction, agent, project", () => {
      expect(entity('ro-crate-metadata.json')).toMatchObject({
        '@type': 'CreativeWork',
        conformsTo: { '@id': 'https://w3id.org/ro/crate/1.2' },
        about: { '@id': './' },
      });
      const root = entity('./');
      expect(root).toMatchObject({
        '@type': 'Dataset',
        conformsTo: { '@id': PROFILE },
        sourceOrganization: { '@id': '#project' },
      });
      expect(entity(PROFILE)['@type']).toBe('Profile');
      const mentioned = (root.mentions as { '@id': string }[]).map((m) => entity(m['@id']));
      const [action] = mentioned.filter((e) => e['@type'] === 'CreateAction');
      expect(action).toMatchObject({
        actionStatus: { '@id': 'http://schema.org/CompletedActionStatus' },
        object: { '@id': '#project' },
      });
      expect(entity((action.agent as { '@id': string })['@id'])['@type']).toBe('Person');
      expect(entity((action.instrument as { '@id': string })['@id'])['@type']).toBe(
        'SoftwareApplication',
      );
      expect(entity('#project')).toMatchObject({ '@type': 'Project', alternateName: PROJECT });
    });

    it('safe data: each dataset with its DUO terms, legal bases and DRS copy with its checksum', async () => {
      const [{ id, accession }] = datasets;
      const codes = await c.dataSource.query<{ use_class: string }[]>(
        `SELECT DISTINCT uc.use_class::text AS use_class FROM use_conditions uc
         JOIN data_declarations dd ON dd.id = uc.data_declaration_id WHERE dd.dataset_id = $1`,
        [id],
      );
      const expected = { PUB: DUO('0000019'), HMB: DUO('0000006'), GRU: DUO('0000042') } as Record<
        string,
        string
      >;
      expect(codes.length).toBeGreaterThan(0);
      const dataset = entity(`#dataset-${accession}`);
      expect((dataset.usageInfo as { '@id': string }[]).map((ref) => ref['@id']).sort()).toEqual(
        codes.map((row) => expected[row.use_class]).sort(),
      );
      for (const ref of dataset.usageInfo as { '@id': string }[]) {
        expect(entity(ref['@id'])).toMatchObject({
          '@type': 'DefinedTerm',
          inDefinedTermSet: { '@id': 'http://purl.obolibrary.org/obo/duo.owl' },
        });
      }
      expect(dataset.distribution).toEqual([{ '@id': 'drs://drs.example.org/pd-omics-1' }]);
      const copy = entity('drs://drs.example.org/pd-omics-1');
      expect(copy).toMatchObject({ '@type': 'DataDownload', contentSize: '4096' });
      const checksum = entity((copy.identifier as [string, { '@id': string }])[1]['@id']);
      expect(checksum).toMatchObject({ propertyID: 'manifest-sha256', value: 'a'.repeat(64) });
      expect(
        ofType('Dataset')
          .map((e) => e['@id'])
          .sort(),
      ).toEqual(['./', ...datasets.map((d) => `#dataset-${d.accession}`)].sort());
    });

    it('safe people: the REMS grant, to whom, by whom, when, until when', () => {
      const grants = ofType('AuthorizeAction').filter(
        (e) => (e.recipient as { '@id': string } | undefined)?.['@id'] === '#subject-sub-auditee',
      );
      expect(grants).toHaveLength(1);
      expect(grants[0]).toMatchObject({
        object: { '@id': `#dataset-${datasets[0].accession}` },
        endTime: '2031-01-31',
        description: expect.stringContaining('REMS application 77'),
      });
      expect(Date.parse(grants[0].startTime as string)).not.toBeNaN();
      expect(entity((grants[0].agent as { '@id': string })['@id'])).toMatchObject({
        '@type': 'SoftwareApplication',
        name: 'system::access-requests',
      });
      expect(entity('#subject-sub-auditee')).toMatchObject({ '@type': 'Person' });
    });
  });

  describe('from the trail, checkable by the auditor', () => {
    it('safe outputs: every byte range read of the project, who and when, and no other', () => {
      const [header, ...rows] = file('data/outputs/byte-ranges.csv')
        .toString()
        .trim()
        .split('\r\n')
        .map((line) => line.split(','));
      expect(header).toEqual(OUTPUT_COLUMNS);
      const at = (name: string) => OUTPUT_COLUMNS.indexOf(name);
      const fields = ['event_id', 'subject', 'dataset', 'drs_object'].map(at);
      const numbers = ['range_start', 'bytes'].map(at);
      expect(
        rows.map((r) => [...fields.map((n) => r[n]), ...numbers.map((n) => Number(r[n]))]),
      ).toEqual(
        served.map((s) => [
          s.id,
          'sub-auditee',
          datasets[0].accession,
          'pd-omics-1',
          s.range_start,
          s.bytes,
        ]),
      );
    });

    it('every entry recomputes to its hash, and the signed head covers them', async () => {
      const head = JSON.parse(file('data/trail/head.json').toString());
      const key = await importJWK(head.jwk, head.jwk.alg);
      const { payload } = await compactVerify(head.jws, key);
      expect(JSON.parse(Buffer.from(payload).toString())).toEqual(head.head);
      const entries = file('data/trail/entries.jsonl')
        .toString()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      for (const entry of entries) {
        const computed = createHash('sha256')
          .update(Buffer.from(entry.prev_hash, 'hex'))
          .update(Buffer.from(entry.body, 'utf8'))
          .digest('hex');
        expect([entry.seq, computed]).toEqual([entry.seq, entry.hash]);
        expect(entry.seq).toBeLessThanOrEqual(Number(head.head.seq));
      }
      // The same entries as the database holds, in chain order, the export's own last.
      const seqs = entries.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      const [stored] = await c.dataSource.query<{ hash: string }[]>(
        `SELECT encode(hash, 'hex') AS hash FROM audit_log WHERE id = $1`,
        [head.head.seq],
      );
      expect(entries[entries.length - 1]).toMatchObject({
        seq: Number(head.head.seq),
        type: 'project.export_audit_crate',
        hash: stored.hash,
        actor: { kind: 'global' },
      });
      const types = new Set(entries.map((e) => e.type));
      expect([...types]).toEqual(expect.arrayContaining(['access.grant', 'drs_object.serve']));
      // The other project's read is not the auditor's business.
      expect(entries.some((e) => e.object.id === 'elsewhere-1')).toBe(false);
      // The grant's trail entry carries the data-use terms it was granted under.
      const grant = entries.find((e) => e.type === 'access.grant');
      expect(grant.change.duo).toEqual(
        (entity(`#dataset-${datasets[0].accession}`).usageInfo as { '@id': string }[])
          .map((ref) => ref['@id'])
          .sort(),
      );
    });
  });

  it('has a CLI twin writing the same crate to a file, recorded as the CLI user’s', async () => {
    let out = '';
    let err = '';
    const code = await runCli(
      ['audit-crate', PROJECT, '--out', 'crate.zip'],
      {
        DATABASE_URL: c.databaseUrl,
        CATALOG_CLI_USER: 'auditor',
        AUDIT_SIGNING_KEY_FILE: signingKey,
      },
      { out: (t) => (out += t), err: (t) => (err += t), cwd: dir },
    );
    expect({ code, err }).toEqual({ code: 0, err: '' });
    const written = readFileSync(join(dir, 'crate.zip'));
    expect(JSON.parse(out)).toEqual({ file: join(dir, 'crate.zip'), bytes: written.length });
    const copy = await unzip(written);
    expect([...copy.keys()].map((p) => p.slice(p.indexOf('/'))).sort()).toEqual(
      [...files.keys()].map((p) => p.slice(p.indexOf('/'))).sort(),
    );
    const [last] = await c.dataSource.query<{ actor_kind: string; actor_name: string }[]>(
      `SELECT actor_kind, actor_name FROM audit_log WHERE action = 'export_audit_crate'
       ORDER BY id DESC LIMIT 1`,
    );
    expect(last).toEqual({ actor_kind: 'cli', actor_name: 'auditor' });

    // Never over an existing file, and refused before the export is cut: nothing recorded.
    const exports = async () =>
      (
        await c.dataSource.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM audit_log WHERE action = 'export_audit_crate'`,
        )
      )[0].n;
    const before = await exports();
    err = '';
    const again = await runCli(
      ['audit-crate', PROJECT, '--out', 'crate.zip'],
      { DATABASE_URL: c.databaseUrl, AUDIT_SIGNING_KEY_FILE: signingKey },
      { out: () => undefined, err: (t) => (err += t), cwd: dir },
    );
    expect(again).toBe(1);
    expect(err).toContain(`${join(dir, 'crate.zip')} exists: nothing overwritten`);
    expect(readFileSync(join(dir, 'crate.zip')).equals(written)).toBe(true);
    expect(await exports()).toBe(before);

    // Under its own name, a second export of the day finds the first there: it is kept too,
    // and nothing is recorded for the refusal.
    const named = mkdtempSync(join(dir, 'named-'));
    const cli = (write: (t: string) => void) =>
      runCli(
        ['audit-crate', PROJECT],
        { DATABASE_URL: c.databaseUrl, AUDIT_SIGNING_KEY_FILE: signingKey },
        { out: write, err: write, cwd: named },
      );
    let first = '';
    expect(await cli((t) => (first += t))).toBe(0);
    const { file } = JSON.parse(first) as { file: string };
    expect(file.startsWith(`${named}/`) && file.endsWith('.zip')).toBe(true);
    const kept = readFileSync(file);
    const recorded = await exports();
    err = '';
    expect(await cli((t) => (err += t))).toBe(1);
    expect(err).toContain(`${file} exists: nothing overwritten`);
    expect(readFileSync(file).equals(kept)).toBe(true);
    expect(await exports()).toBe(recorded);
  });

  it('reads the trail a window at a time, only as fast as the crate is read', async () => {
    // 20 windows of reads in the trail: the export must not read ahead of a reader that stops.
    const pages = 20;
    await c.dataSource.query(
      `INSERT INTO audit_log (actor_kind, action, object_type, object_id, change)
       SELECT 'registrar', 'serve', 'drs_object', 'pd-omics-1',
              jsonb_build_object('occurred_at', '2026-11-26T11:00:00.000Z', 'subject', 'sub-bulk-' || g,
                'dataset', $1::text, 'range_start', g * 100, 'bytes', 100)
       FROM generate_series(1, $2::int) g`,
      [datasets[0].accession, pages * CRATE_WINDOW],
    );
    const repository = c.app.get(AuditCrateRepository);
    const original = repository.trailPage.bind(repository);
    // Windows read by the pass that writes every entry (the one without a type filter).
    let calls = 0;
    let inFlight = 0;
    const spy = jest.spyOn(repository, 'trailPage').mockImplementation(async (...args) => {
      if (args[4] === undefined) calls++;
      inFlight++;
      try {
        return await original(...args);
      } finally {
        inFlight--;
      }
    });
    try {
      const { stream } = await c.app
        .get(AuditCrateService)
        .open(PROJECT, { kind: 'cli', name: 't' });
      // Nobody reads: once the stream's buffer is full and no page is being read, it waits.
      const deadline = Date.now() + 30_000;
      let settled = 0;
      while (settled < 50) {
        if (Date.now() > deadline)
          throw new Error('the export neither filled its buffer nor waited');
        await new Promise((resolve) => setImmediate(resolve));
        const full = stream.readableLength >= stream.readableHighWaterMark;
        settled = full && inFlight === 0 ? settled + 1 : 0;
      }
      expect(calls).toBeLessThan(pages / 2);
      let bytes = 0;
      for await (const chunk of stream) bytes += (chunk as Buffer).length;
      expect(bytes).toBeGreaterThan(0);
      expect(calls).toBeGreaterThan(pages);
    } finally {
      spy.mockRestore();
    }
  }, 90_000);
});
