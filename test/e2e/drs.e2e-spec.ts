import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { connect, type Socket } from 'node:net';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { Logger } from '@nestjs/common';
import request from 'supertest';
import { generateApiKey, hashApiKey } from '@app/auth';
import {
  encrypt as c4ghEncrypt,
  generateKeyPair as generateC4ghKeyPair,
  parsePublicKey,
  publicKeyFile,
  secretKeyFile,
} from '@app/crypt4gh';
import { referenceDecrypt } from '../support/crypt4gh-reference';
import { freePort } from '../support/app-process';
import { TEST_GLOBAL_KEY } from '../support/catalog-app';
import { drsAnswerChecker } from '../support/drs-openapi';
import {
  startProvisionerApps,
  TEST_WRITE_KEY,
  type ProvisionerTestApps,
} from '../support/provisioner-app';
import { poll, until } from '../support/wait';
import { brokerPassport, catalogVisas, grantReader } from '../support/drs-reader';
import { startOffloadNginx, type OffloadNginx } from '../support/nginx';
import { sendRaw } from '../support/raw-http';
import { metricSample } from '../support/prometheus-text';
import { provisionerTestSettings, queueEnv } from '../support/provisioner-app';
import { createProvisionerApiApp } from '../../apps/provisioner/src/http-app';
import { AccessUrls } from '../../apps/provisioner/src/drs/access-urls';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DemoCatalog, startDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { readVisaKey, signCompact } from '../../apps/catalog-api/src/ga4gh/visa-signing-key';
import { FakeKeycloak } from '../../apps/catalog-api/test/support/fake-keycloak';
import type { ImportRecord } from '../../apps/provisioner/src/imports/import-record';
import { DropzoneFixture, tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import { dropzoneEnv, waitForImport } from '../../apps/provisioner/test/support/provisioner-e2e';

const REGISTRATION_KEY = generateApiKey(48);
const BROKER_KEY = generateApiKey(48);
const DRS = '/ga4gh/drs/v1';
const READER = 'sub-drs-reader';
const REGION = 'chr1:20000-40000';
/** 24 MiB: many times what loopback's socket buffers take from an answer nobody reads. */
const BIG = Buffer.alloc(24 * 1024 * 1024, 'drs slow readers ');
/**
 * Clients run beside the apps, which serve from this process: never a blocking call. In `cwd`,
 * as htslib keeps a copy of a remote index in the working directory.
 */
const run = async (command: string, args: string[], cwd?: string) =>
  (await promisify(execFile)(command, args, { encoding: 'buffer', timeout: 60_000, cwd })).stdout;

/** A sorted, indexed BAM made by samtools from a SAM of 2,000 reads on chr1 written here. */
function makeBam(dir: string): { bam: Buffer; bai: Buffer; localCount: number } {
  const lines = ['@HD\tVN:1.6\tSO:unsorted', '@SQ\tSN:chr1\tLN:100000'];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < 2000; i++) {
    const pos = 1 + (next() % 99_900);
    const seq = Array.from({ length: 50 }, () => 'ACGT'[next() % 4]).join('');
    lines.push(`r${i}\t0\tchr1\t${pos}\t60\t50M\t*\t0\t0\t${seq}\t${'I'.repeat(50)}`);
  }
  writeFileSync(join(dir, 'reads.sam'), `${lines.join('\n')}\n`);
  execFileSync('samtools', ['sort', '-o', join(dir, 'reads.bam'), join(dir, 'reads.sam')]);
  execFileSync('samtools', ['index', join(dir, 'reads.bam')]);
  const localCount = Number(
    execFileSync('samtools', ['view', '-c', join(dir, 'reads.bam'), REGION])
      .toString()
      .trim(),
  );
  return {
    bam: readFileSync(join(dir, 'reads.bam')),
    bai: readFileSync(join(dir, 'reads.bam.bai')),
    localCount,
  };
}

describe('GA4GH DRS 1.5: the imported data, to holders of a visa for it', () => {
  const dir = tempDir('e2e-drs');
  const dropzone = new DropzoneFixture(join(dir, 'dropzone'));
  const storageRoot = join(dir, 'storage');
  const check = drsAnswerChecker();
  let catalog: DemoCatalog;
  let kc: FakeKeycloak;
  let apps: ProvisionerTestApps;
  let issuer: string;
  let drsUrl: string;
  let keyPem: string;
  let made: ReturnType<typeof makeBam>;
  const accession: Record<string, string> = {};
  const record: Record<string, ImportRecord> = {};
  let apiEnv: Record<string, string>;

  const api = () => request(apps.api.getHttpServer());
  /** The reader's passport as a broker would hand it over: the catalog's visas in a JWT. */
  const passportOf = async (visas?: string[]) =>
    brokerPassport(READER, visas ?? (await catalogVisas(catalog.server, READER)));
  /** A visa signed with the catalog's own key (or `key`), with `change` applied to its claims. */
  const visa = (change: (claims: Record<string, unknown>) => void, pem = keyPem) => {
    const key = readVisaKey(pem, 'RS256', 'test');
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: issuer,
      sub: READER,
      iat: now,
      exp: now + 3600,
      ga4gh_visa_v1: {
        type: 'ControlledAccessGrants',
        value: accession.bam,
        source: issuer,
        by: 'dac',
        asserted: now - 60,
      },
    };
    change(claims);
    const header = { alg: 'RS256', jku: `${issuer}/api/jwk`, typ: 'JWT', kid: key.kid };
    return signCompact(header, claims, key.privateKey!, 'RS256');
  };
  const objectIds = async () => {
    const ids = new Map<string, string>();
    const manifest = await bytesOf(await accessUrl(datasetId('DS-BAM')));
    for (const o of JSON.parse(manifest.toString()).objects as { id: string; path: string }[]) {
      ids.set(o.path, o.id);
    }
    return ids;
  };
  const datasetId = (name: string) => `PD-OMICS~SUB-1~${name}`;
  const accessUrl = async (id: string, passport?: string) => {
    const res = await api()
      .post(`${DRS}/objects/${id}/access/https`)
      .send({ passports: [passport ?? (await passportOf())] })
      .expect(200);
    expect(check('/objects/{object_id}/access/{access_id}', 'post', 200, res.body)).toEqual([]);
    return res.body.url as string;
  };
  /** The reader is granted the dataset of `registered` (its dataset needs an exposure first). */
  const exposeAndGrant = async (registered: string) => {
    await catalog.dataSource.query(
      `INSERT INTO exposures (form_id, dataset_id, endpoint_id)
       SELECT 1, d.id, (SELECT min(id) FROM endpoints) FROM datasets d WHERE d.elu_accession = $1`,
      [registered],
    );
    await catalog.dataSource.query(
      `INSERT INTO accesses (dataset_id, user_id, status, granted_on)
       SELECT d.id, u.id, 'active', now()::date FROM datasets d, users u
       WHERE d.elu_accession = $1 AND u.oidc_id = $2`,
      [registered, READER],
    );
  };
  const bytesOf = async (url: string, range?: string) => {
    const res = await fetch(url, range === undefined ? {} : { headers: { range } });
    return Buffer.from(await res.arrayBuffer());
  };

  beforeAll(async () => {
    made = makeBam(dir);
    const pemPath = join(dir, 'visa-key.pem');
    keyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    writeFileSync(pemPath, keyPem, { mode: 0o600 });
    kc = await new FakeKeycloak().start();
    const catalogPort = await freePort();
    issuer = `http://127.0.0.1:${catalogPort}`;
    catalog = await startDemoCatalog({
      REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
      GA4GH_BROKER_API_KEY_SHA256: createHash('sha256').update(BROKER_KEY).digest('hex'),
      GA4GH_VISA_KEY_FILE: pemPath,
      CATALOG_SOURCE: issuer,
      DCAT_PUBLISHER_NAME: 'Luxembourg Centre for Systems Biomedicine',
      IDP_URL: kc.url,
      IDP_REALM: kc.realm,
      IDP_CLIENT_ID: kc.clientId,
      IDP_CLIENT_SECRET: kc.clientSecret,
      IDP_TIMEOUT_MS: '1000',
    });
    await catalog.app.listen(catalogPort, '127.0.0.1');
    dropzone
      .submission('SUB-1', {
        project: 'PD-OMICS',
        datasets: ['DS-BAM', 'DS-OTHER', 'DS-LARGE', 'DS-BIG'],
      })
      .dataset('DS-BAM', {
        submission: 'SUB-1',
        title: 'Aligned reads',
        files: { 'reads.bam': made.bam, 'reads.bam.bai': made.bai, 'notes/read me.txt': 'hello' },
      })
      .dataset('DS-OTHER', { submission: 'SUB-1', title: 'Other reads', files: { 'o.txt': 'o' } })
      // One file far larger than what a stopped socket absorbs (imported by the slow readers).
      .dataset('DS-BIG', {
        submission: 'SUB-1',
        title: 'One large file',
        files: { 'big.bin': BIG },
      })
      // One file more than DRS_MAX_DATASET_FILES below: too large to serve here.
      .dataset('DS-LARGE', {
        submission: 'SUB-1',
        title: 'Many files',
        files: { 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c', 'd.txt': 'd' },
      });
    const provisionerPort = await freePort();
    drsUrl = `http://127.0.0.1:${provisionerPort}`;
    apiEnv = await dropzoneEnv(dropzone, storageRoot, {
      CATALOG_URL: issuer,
      CATALOG_API_KEY: REGISTRATION_KEY,
      CATALOG_RETRY_DELAY_MS: '100',
      DRS_PUBLIC_URL: drsUrl,
      DRS_VISA_ISSUER: issuer,
      DRS_CATALOG_BROKER_KEY: BROKER_KEY,
      // Every request asks the catalog: a revocation shows at once.
      DRS_GRANT_CHECK_SECONDS: '0',
      DRS_MAX_BULK_REQUEST_LENGTH: '20',
      DRS_MAX_VISAS: '50',
      DRS_MAX_DATASET_FILES: '3',
    });
    apps = await startProvisionerApps(apiEnv);
    await apps.api.listen(provisionerPort, '127.0.0.1');
    const large = await api()
      .post('/datasets/dropzone/import')
      .set('X-API-Key', TEST_WRITE_KEY)
      .send({ dataset_id: 'DS-LARGE' });
    await waitForImport(apps.api, large.body.id as string);
    for (const [name, key] of [
      ['DS-BAM', 'bam'],
      ['DS-OTHER', 'other'],
    ]) {
      const res = await api()
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: name });
      await waitForImport(apps.api, res.body.id as string);
      await until(
        async () => {
          const r = await api().get(`/imports/${res.body.id}`).set('X-API-Key', TEST_WRITE_KEY);
          record[key] = r.body as ImportRecord;
          return record[key].catalog?.state === 'registered';
        },
        `${name} registered`,
        30_000,
        50,
      );
      accession[key] = record[key].catalog!.accession!;
    }
    // The reader is granted DS-BAM only (its registered dataset needs an exposure to be granted).
    await grantReader(
      catalog.dataSource,
      { subject: READER, username: 'drs-reader' },
      [accession.bam, accession.other],
      accession.bam,
    );
  }, 120_000);

  afterAll(async () => {
    await apps?.close();
    await catalog?.close();
    await kc?.stop();
  });

  it('says what it serves in service-info: DRS 1.5, the bulk limit, the object count and total size', async () => {
    const res = await api().get(`${DRS}/service-info`).expect(200);
    expect(check('/service-info', 'get', 200, res.body)).toEqual([]);
    expect(res.body).toMatchObject({
      type: { group: 'org.ga4gh', artifact: 'drs', version: '1.5.0' },
      maxBulkRequestLength: 20,
      drs: { maxBulkRequestLength: 20, objectCount: 3 + 1 + 1 + 1 },
    });
    const stored = made.bam.length + made.bai.length + 5 + 1;
    expect(res.body.drs.totalObjectSize).toBeGreaterThan(stored);
  });

  it('refuses a dataset of more files than DRS_MAX_DATASET_FILES (501, before reading its list) and leaves it out of service-info', async () => {
    // service-info above counts DS-BAM (3 files + manifest) and DS-OTHER (1 + manifest) only.
    // The dataset and one of its files (its id: the first 20 hex digits of its path's SHA-256).
    const fileId = `${datasetId('DS-LARGE')}~${createHash('sha256').update('a.txt').digest('hex').slice(0, 20)}`;
    for (const id of [datasetId('DS-LARGE'), fileId]) {
      const res = await api().get(`${DRS}/objects/${id}`).expect(501);
      expect(res.body).toMatchObject({
        status_code: 501,
        more: { reason: 'dataset_too_large', files: 4, max: 3 },
      });
      expect(res.body.msg).toContain('DRS_MAX_DATASET_FILES');
    }
    // The datasets within the bound are served as before.
    await api()
      .options(`${DRS}/objects/${datasetId('DS-BAM')}`)
      .expect(200);
  });

  it('registers the dataset’s drs:// URI: the import record, the catalog’s record and its DCAT distribution carry it', async () => {
    const uri = `drs://${new URL(drsUrl).host}/${datasetId('DS-BAM')}`;
    expect(record.bam.catalog).toEqual({
      state: 'registered',
      accession: accession.bam,
      error: null,
      drs_uri: uri,
    });
    await catalog.versionSettled();
    const datasets = await request(catalog.server)
      .get('/api/datasets')
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .expect(200);
    const entry = (
      datasets.body.items as { external_id: string; storages: { drs_uri?: string }[] }[]
    ).find((d) => d.external_id === accession.bam);
    expect(entry?.storages.map((s) => s.drs_uri)).toEqual([uri]);
    const dcat = await request(catalog.server)
      .get(`/api/dcat/datasets/${accession.bam}`)
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .expect(200);
    expect(dcat.text).toContain(`dcat:accessURL <${uri}>`);
  });

  it('answers OPTIONS with PassportAuth from the catalog and BearerAuth, to anyone', async () => {
    const res = await api()
      .options(`${DRS}/objects/${datasetId('DS-BAM')}`)
      .expect(200);
    expect(check('/objects/{object_id}', 'options', 200, res.body)).toEqual([]);
    expect(res.body).toEqual({
      drs_object_id: datasetId('DS-BAM'),
      supported_types: ['PassportAuth', 'BearerAuth'],
      passport_auth_issuers: [issuer],
    });
  });

  it('serves each file as a DRS object with the stored SHA-256, the accession among its aliases', async () => {
    const ids = await objectIds();
    expect([...ids.keys()].sort()).toEqual(['notes/read me.txt', 'reads.bam', 'reads.bam.bai']);
    const id = ids.get('reads.bam')!;
    const res = await api()
      .post(`${DRS}/objects/${id}`)
      .send({ passports: [await passportOf()] })
      .expect(200);
    expect(check('/objects/{object_id}', 'post', 200, res.body)).toEqual([]);
    const provenance = JSON.parse(
      readFileSync(join(storageRoot, record.bam.path, '.provisioner/provenance.json'), 'utf8'),
    );
    expect(res.body).toMatchObject({
      id,
      self_uri: `drs://${new URL(drsUrl).host}/${id}`,
      name: 'reads.bam',
      size: made.bam.length,
      created_time: provenance.import.staged_at,
      checksums: [
        { type: 'sha-256', checksum: createHash('sha256').update(made.bam).digest('hex') },
      ],
      access_methods: [{ type: 'https', access_id: 'https' }],
    });
    expect(res.body.aliases).toContain(accession.bam);
    // The dataset itself: a compound object whose manifest lists the files' ids.
    const dataset = await api()
      .post(`${DRS}/objects/${datasetId('DS-BAM')}`)
      .send({ passports: [await passportOf()] })
      .expect(200);
    expect(check('/objects/{object_id}', 'post', 200, dataset.body)).toEqual([]);
    expect(dataset.body).toMatchObject({ mime_type: 'application/json', aliases: [accession.bam] });
  });

  it('exchanges a login (Authorization: Bearer) for the same visas: its own grants only', async () => {
    const id = (await objectIds()).get('reads.bam')!;
    const own = await api()
      .get(`${DRS}/objects/${id}`)
      .set('Authorization', `Bearer ${await kc.accessToken({ sub: READER })}`)
      .expect(200);
    expect(check('/objects/{object_id}', 'get', 200, own.body)).toEqual([]);
    const url = await api()
      .get(`${DRS}/objects/${id}/access/https`)
      .set('Authorization', `Bearer ${await kc.accessToken({ sub: READER })}`)
      .expect(200);
    expect((await bytesOf(url.body.url as string)).equals(made.bam)).toBe(true);
    // Someone else's login: no grant of theirs names the dataset.
    const other = await api()
      .get(`${DRS}/objects/${id}`)
      .set('Authorization', `Bearer ${await kc.accessToken({ sub: 'sub-nobody' })}`)
      .expect(403);
    expect(other.body).toMatchObject({ status_code: 403, more: { reason: 'not_granted' } });
    // A token the identity provider did not sign: the catalog refuses it, so does DRS.
    const forged = await kc.accessToken({ sub: READER });
    const [h, p] = forged.split('.');
    const refused = await api()
      .get(`${DRS}/objects/${id}`)
      .set('Authorization', `Bearer ${h}.${p}.AAAA`)
      .expect(401);
    expect(refused.body).toMatchObject({ status_code: 401, more: { reason: 'bad_login' } });
  });

  it('DRS users do not share one address at the catalog: 40 bad logins all hear 401, a good one still reads', async () => {
    const id = (await objectIds()).get('reads.bam')!;
    const good = await kc.accessToken({ sub: READER });
    const [h, p] = good.split('.');
    const expired = await kc.accessToken({ sub: READER }, { expiresInSeconds: -60 });
    // Twice the catalog's failure limit (AUTH_FAILURE_LIMIT, 20 a minute), from anyone: forged
    // tokens (the catalog verifies and refuses them) and expired ones (refused at once).
    const reasons: string[] = [];
    for (let i = 0; i < 40; i++) {
      const token =
        i % 4 === 0 ? expired : `${h}.${p}.${Buffer.from(`forged-${i}`).toString('base64url')}`;
      const res = await api().get(`${DRS}/objects/${id}`).set('Authorization', `Bearer ${token}`);
      reasons.push(`${res.status} ${res.body.more?.reason}`);
    }
    expect(new Set(reasons)).toEqual(new Set(['401 bad_login', '401 login_expired']));
    // The catalog took none of it for a guess from the provisioner's address.
    await api().get(`${DRS}/objects/${id}`).set('Authorization', `Bearer ${good}`).expect(200);
  });

  it('a login whose subject is `.` or `..` cannot change the catalog route: 401', async () => {
    const id = (await objectIds()).get('reads.bam')!;
    for (const sub of ['.', '..']) {
      const res = await api()
        .get(`${DRS}/objects/${id}`)
        .set('Authorization', `Bearer ${await kc.accessToken({ sub })}`);
      expect([sub, res.status, res.body.more?.reason]).toEqual([sub, 401, 'bad_subject']);
    }
  });

  it('lets samtools count the reads of a region through the access URLs, as on the local file', async () => {
    const ids = await objectIds();
    const bam = await accessUrl(ids.get('reads.bam')!);
    const bai = await accessUrl(ids.get('reads.bam.bai')!);
    const count = await run('samtools', ['view', '-c', '-X', bam, bai, REGION], dir);
    expect(made.localCount).toBeGreaterThan(100);
    expect(Number(count.toString().trim())).toBe(made.localCount);
  });

  it("lets samtools find the BAM's index by URL alone (<url>.bai), as beside a local file", async () => {
    const ids = await objectIds();
    const bam = await accessUrl(ids.get('reads.bam')!);
    // An empty working directory: htslib keeps a remote index there, and looks there first.
    const fresh = mkdtempSync(join(dir, 'no-index-'));
    const count = await run('samtools', ['view', '-c', bam, REGION], fresh);
    expect(Number(count.toString().trim())).toBe(made.localCount);
    // The index's bytes under its own name; a name that is no file beside the object is a 404.
    expect((await bytesOf(`${bam}.bai`)).equals(made.bai)).toBe(true);
    const other = await fetch(bam.replace(/[^/]+$/, 'elsewhere.bam'));
    expect(other.status).toBe(404);
  });

  it('answers curl range reads with the stored bytes: 206, HEAD, ETag, and 416 past the end', async () => {
    const ids = await objectIds();
    const url = await accessUrl(ids.get('reads.bam')!);
    const part = await run('curl', ['-sf', '-r', '100-4195', url]);
    expect(part.equals(made.bam.subarray(100, 4196))).toBe(true);
    const head = (await run('curl', ['-sfI', url])).toString();
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toMatch(new RegExp(`content-length: ${made.bam.length}\\r`, 'i'));
    expect(head).toMatch(/accept-ranges: bytes/i);
    expect(head).toContain(`"${createHash('sha256').update(made.bam).digest('hex')}"`);
    const tail = await fetch(url, { headers: { range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get('content-range')).toBe(
      `bytes ${made.bam.length - 10}-${made.bam.length - 1}/${made.bam.length}`,
    );
    expect(Buffer.from(await tail.arrayBuffer()).equals(made.bam.subarray(-10))).toBe(true);
    const past = await fetch(url, { headers: { range: `bytes=${made.bam.length}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${made.bam.length}`);
    expect(await past.json()).toMatchObject({ status_code: 416, msg: expect.any(String) });
    expect((await bytesOf(url)).equals(made.bam)).toBe(true);
  });

  it('binds an access URL to its object: another token or a changed one reads nothing', async () => {
    const ids = await objectIds();
    const url = await accessUrl(ids.get('notes/read me.txt')!);
    const token = new URL(url).pathname.split('/')[2];
    const [payload, mac] = token.split('.');
    const other = JSON.parse(Buffer.from(payload, 'base64url').toString());
    other.o = ids.get('reads.bam');
    const forged = `${Buffer.from(JSON.stringify(other)).toString('base64url')}.${mac}`;
    const res = await fetch(url.replace(token, forged));
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ status_code: 403, more: { reason: 'url_invalid' } });
  });

  describe('refuses hostile clients cleanly, in the specification’s error body', () => {
    const refused = async (passports: string[], status: number, id?: string) => {
      const target = id ?? (await objectIds()).get('reads.bam')!;
      const res = await api().post(`${DRS}/objects/${target}`).send({ passports }).expect(status);
      expect(res.body).toMatchObject({
        status: 'Error',
        status_code: status,
        msg: expect.any(String),
      });
      expect(check('/objects/{object_id}', 'post', status, res.body)).toEqual([]);
      return res.body as { more: { reason: string; refusals?: Record<string, number> } };
    };

    it('audits each refusal: one DrsAudit line with status, reason, path, subject and client, never the credential', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      try {
        const passport = await passportOf();
        await refused([passport], 403, datasetId('DS-OTHER'));
        const audits = warn.mock.calls
          .map(([entry]) => entry as Record<string, unknown>)
          .filter((entry) => entry?.audit === 'drs_refusal');
        expect(audits).toEqual([
          {
            audit: 'drs_refusal',
            status: 403,
            reason: 'not_granted',
            method: 'POST',
            path: `${DRS}/objects/${datasetId('DS-OTHER')}`,
            subject: READER,
            client: expect.any(String),
          },
        ]);
        expect(JSON.stringify(warn.mock.calls)).not.toContain(passport.slice(-20));
      } finally {
        warn.mockRestore();
      }
    });

    it('no credentials: 401', async () => {
      const id = (await objectIds()).get('reads.bam')!;
      const res = await api().get(`${DRS}/objects/${id}`).expect(401);
      expect(res.body).toMatchObject({ status_code: 401, more: { reason: 'no_credentials' } });
    });

    it('a forged visa (claims changed after signing): 401, signature', async () => {
      const [good] = (
        await request(catalog.server)
          .get(`/api/ga4gh/permissions/${READER}`)
          .set('X-API-Key', TEST_GLOBAL_KEY)
      ).body.ga4gh_passport_v1 as string[];
      const [header, , signature] = good.split('.');
      const claims = decodeJwt(good);
      (claims.ga4gh_visa_v1 as { value: string }).value = accession.other;
      const forged = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
      const body = await refused([await passportOf([forged])], 401, datasetId('DS-OTHER'));
      expect(body.more.refusals).toEqual({ signature: 1 });
    });

    it('an expired visa, one re-signed by another key, one of another issuer, one with conditions: 401 each', async () => {
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString();
      const resigned = visa(() => undefined, other);
      // Same kid as the catalog's key, another key's signature.
      const header = decodeProtectedHeader(visa(() => undefined));
      expect(decodeProtectedHeader(resigned).kid).not.toBe(header.kid);
      const cases: [string, string][] = [
        [visa((c) => (c.exp = Math.floor(Date.now() / 1000) - 5)), 'expired'],
        [resigned, 'signature'],
        [visa((c) => (c.iss = 'https://elsewhere.example')), 'wrong issuer'],
        [
          visa((c) => ((c.ga4gh_visa_v1 as Record<string, unknown>).conditions = [[]])),
          'conditions',
        ],
      ];
      for (const [jws, reason] of cases) {
        const body = await refused([await passportOf([jws])], 401);
        expect(body.more.refusals).toEqual({ [reason]: 1 });
      }
      // A jku that is not the allow-listed one is never fetched.
      const untrusted = visa(() => undefined).split('.');
      const h = JSON.parse(Buffer.from(untrusted[0], 'base64url').toString());
      h.jku = 'http://127.0.0.1:9/evil/jwk';
      untrusted[0] = Buffer.from(JSON.stringify(h)).toString('base64url');
      expect((await refused([await passportOf([untrusted.join('.')])], 401)).more.refusals).toEqual(
        {
          'untrusted jku': 1,
        },
      );
    });

    it('a valid visa for another dataset: 403; the granted one: 200', async () => {
      const passport = await passportOf();
      await refused([passport], 403, datasetId('DS-OTHER'));
      await api()
        .post(`${DRS}/objects/${datasetId('DS-BAM')}`)
        .send({ passports: [passport] })
        .expect(200);
    });

    it('a valid visa the catalog no longer vouches for (revoked): 403 at the next request', async () => {
      // A visa the catalog's key signed for DS-OTHER, which the reader was never granted.
      const body = await refused(
        [
          await passportOf([
            visa((c) => {
              (c.ga4gh_visa_v1 as { value: string }).value = accession.other;
            }),
          ]),
        ],
        403,
        datasetId('DS-OTHER'),
      );
      expect(body.more.reason).toBe('not_granted');
      const passport = await passportOf();
      await catalog.dataSource.query(
        `UPDATE accesses SET status = 'terminated', updated_at = now()
         WHERE user_id = (SELECT id FROM users WHERE oidc_id = $1)`,
        [READER],
      );
      try {
        await refused([passport], 403, datasetId('DS-BAM'));
      } finally {
        await catalog.dataSource.query(
          `UPDATE accesses SET status = 'active', updated_at = now()
           WHERE user_id = (SELECT id FROM users WHERE oidc_id = $1)`,
          [READER],
        );
      }
    });

    it('a passport of 10,000 visas: refused before any is verified (413 past the body limit, 400 past DRS_MAX_VISAS)', async () => {
      const one = visa(() => undefined);
      const huge = await passportOf(Array.from({ length: 10_000 }, () => one));
      const res = await api()
        .post(`${DRS}/objects/${datasetId('DS-BAM')}`)
        .send({ passports: [huge] });
      expect(res.status).toBe(413);
      const many = await passportOf(Array.from({ length: 51 }, () => one));
      expect((await refused([many], 400, datasetId('DS-BAM'))).more.reason).toBe('too_many_visas');
    });

    it('a bulk request past maxBulkRequestLength: 413; within it, each object resolved or not', async () => {
      const ids = Array.from(
        { length: 21 },
        (_, i) => `${datasetId('DS-BAM')}~${'0'.repeat(19)}${i % 10}`,
      );
      const passport = await passportOf();
      const big = await api()
        .post(`${DRS}/objects`)
        .send({ bulk_object_ids: ids, passports: [passport] });
      expect(big.status).toBe(413);
      expect(check('/objects', 'post', 413, big.body)).toEqual([]);
      const fileIds = [...(await objectIds()).values()];
      const res = await api()
        .post(`${DRS}/objects`)
        .send({
          bulk_object_ids: [...fileIds, datasetId('DS-OTHER'), 'nope'],
          passports: [passport],
        })
        .expect(200);
      expect(check('/objects', 'post', 200, res.body)).toEqual([]);
      expect(res.body.summary).toEqual({ requested: 5, resolved: 3, unresolved: 2 });
      expect(res.body.unresolved_drs_objects).toEqual([
        { error_code: 404, object_ids: ['nope'] },
        { error_code: 403, object_ids: [datasetId('DS-OTHER')] },
      ]);
      const urls = await api()
        .post(`${DRS}/objects/access`)
        .send({
          bulk_object_access_ids: fileIds.map((id) => ({
            bulk_object_id: id,
            bulk_access_ids: ['https'],
          })),
          passports: [passport],
        })
        .expect(200);
      expect(check('/objects/access', 'post', 200, urls.body)).toEqual([]);
      expect(urls.body.resolved_drs_object_access_urls).toHaveLength(3);
    });

    it('ids with encodings, `..` and other storage paths name nothing: 404', async () => {
      const passport = await passportOf();
      for (const id of [
        '..%2F..%2Fetc%2Fpasswd',
        'PD-OMICS~SUB-1~..',
        'PD-OMICS~SUB-1~DS-BAM~..%2F.provisioner%2Fprovenance.json',
        'PD-OMICS%7ESUB-1%7EDS-BAM%7E..',
        '.staging~x~y',
        'PD-OMICS~SUB-1~DS-BAM~00000000000000000000',
      ]) {
        const res = await api()
          .post(`${DRS}/objects/${id}`)
          .send({ passports: [passport] });
        expect([id, res.status]).toEqual([id, 404]);
        expect(res.body).toMatchObject({ status_code: 404 });
      }
      // A range read of an access URL whose token was cut: refused, not served.
      const url = await accessUrl(datasetId('DS-BAM'));
      const token = new URL(url).pathname.split('/')[2];
      const cut = url.replace(token, `${token.split('.')[0]}.x`);
      expect((await fetch(cut)).status).toBe(403);
    });
  });

  describe('downloads that stop reading, and downloads whose grant is revoked', () => {
    const STALL_MS = 2000;
    let bounded: NestExpressApplication;
    let boundedUrl: string;
    const sockets: Socket[] = [];
    const grant = (status: 'active' | 'terminated') =>
      catalog.dataSource.query(
        `UPDATE accesses SET status = $3, updated_at = now()
         WHERE user_id = (SELECT id FROM users WHERE oidc_id = $1)
           AND dataset_id = (SELECT id FROM datasets WHERE elu_accession = $2)`,
        [READER, accession.big, status],
      );
    const bigUrl = async () => {
      const manifest = await bytesOf(await accessUrl(datasetId('DS-BIG')));
      const id = (JSON.parse(manifest.toString()) as { objects: { id: string }[] }).objects[0].id;
      const res = await request(bounded.getHttpServer())
        .post(`${DRS}/objects/${id}/access/https`)
        .send({ passports: [await passportOf()] })
        .expect(200);
      return res.body.url as string;
    };
    /**
     * Asks for `url` as `client` (through the trusted proxy) and reads nothing past the first
     * bytes (or, `trickle`, 64 KiB every 50 ms): resolves with the status once it arrives.
     */
    const download = (url: string, client: string, trickle = false) => {
      const { port, pathname } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1');
      sockets.push(socket);
      socket.on('error', () => undefined);
      let received = 0;
      const closed = new Promise<number>((resolve) =>
        socket.once('close', () => resolve(received)),
      );
      const status = new Promise<string>((resolve) => {
        socket.once('data', (chunk: Buffer) => {
          resolve(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 'none');
        });
        socket.once('close', () => resolve('closed'));
      });
      let draining = false;
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (draining) return;
        socket.pause();
        if (trickle) setTimeout(() => socket.resume(), 50);
      });
      socket.write(
        `GET ${pathname} HTTP/1.1\r\nHost: drs.test\r\nX-Forwarded-For: ${client}\r\n\r\n`,
      );
      /** Reads everything left, to the end the server gave it. */
      const drain = () => {
        draining = true;
        socket.resume();
        return closed;
      };
      return { status, drain };
    };
    const metric = async (name: string) =>
      metricSample(await (await fetch(`${boundedUrl}/metrics`)).text(), name) ?? 0;

    beforeAll(async () => {
      const res = await api()
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: 'DS-BIG' });
      await waitForImport(apps.api, res.body.id as string);
      await until(
        async () => {
          const r = await api().get(`/imports/${res.body.id}`).set('X-API-Key', TEST_WRITE_KEY);
          record.big = r.body as ImportRecord;
          return record.big.catalog?.state === 'registered';
        },
        'DS-BIG registered',
        30_000,
        50,
      );
      accession.big = record.big.catalog!.accession!;
      await exposeAndGrant(accession.big);
      const port = await freePort();
      boundedUrl = `http://127.0.0.1:${port}`;
      bounded = await createProvisionerApiApp(
        provisionerTestSettings({
          ...apiEnv,
          DRS_PUBLIC_URL: boundedUrl,
          TRUSTED_PROXIES: '127.0.0.1',
          SLOW_READER_TIMEOUT_MS: String(STALL_MS),
          SLOW_READERS_PER_CLIENT: '3',
          SLOW_READERS_MAX: '5',
        }),
      );
      await bounded.listen(port, '127.0.0.1');
    }, 60_000);

    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await bounded?.close();
    });

    it('bounds them per client (429) and in all (503), keeps health answering, and cuts the stalled', async () => {
      const url = await bigUrl();
      const cutBefore = await metric('http_responses_stalled_total');
      const first = Array.from({ length: 8 }, () => download(url, '10.9.0.1'));
      const firstStatuses = await Promise.all(first.map((d) => d.status));
      const others = [...Array.from({ length: 4 }, (_, i) => download(url, `10.9.1.${i}`))];
      const otherStatuses = await Promise.all(others.map((d) => d.status));
      const live = await fetch(`${boundedUrl}/health/live`);
      expect(live.status).toBe(200);
      expect(await metric('http_responses_sending')).toBe(5);

      // Three for the one client, the rest of it 429; two more for others, then 503.
      expect(firstStatuses.sort()).toEqual([
        '200',
        '200',
        '200',
        '429',
        '429',
        '429',
        '429',
        '429',
      ]);
      expect(otherStatuses.sort()).toEqual(['200', '200', '503', '503']);
      // Every admitted download is cut once its client has taken nothing for the stall time
      // (what the server holds; a paused client sees the end only once it reads again).
      const started = Date.now();
      await until(
        async () => (await metric('http_responses_sending')) === 0,
        'every stalled download cut',
        2 * STALL_MS + 10_000,
        100,
      );
      expect(Date.now() - started).toBeLessThan(2 * STALL_MS + 10_000);
      expect((await metric('http_responses_stalled_total')) - cutBefore).toBe(5);
      const admitted = [...first, ...others].filter(
        (_, i) => [...firstStatuses, ...otherStatuses][i] === '200',
      );
      for (const bytes of await Promise.all(admitted.map((d) => d.drain()))) {
        expect(bytes).toBeLessThan(BIG.length);
      }
      // Free again: the whole file, read by a client that reads.
      const whole = await fetch(url);
      expect(whole.status).toBe(200);
      expect(Buffer.from(await whole.arrayBuffer()).equals(BIG)).toBe(true);
    });

    it('ends a download under way within the documented bound once its grant is revoked', async () => {
      const url = await bigUrl();
      const cutBefore = await metric('http_responses_stalled_total');
      // A slow but steady reader (never stalled): 64 KiB every 50 ms would take 20 s.
      const reader = download(url, '10.9.2.1', true);
      expect(await reader.status).toBe('200');
      await grant('terminated');
      try {
        const revoked = Date.now();
        // DRS_GRANT_CHECK_SECONDS=0 here: asked again every second (docs: within 2 × it, ≥ 1 s).
        await until(
          async () => (await metric('http_responses_sending')) === 0,
          'the download ended by the revocation',
          10_000,
          50,
        );
        const ended = Date.now() - revoked;
        expect(ended).toBeLessThan(1000 + 2000);
        expect(await reader.drain()).toBeLessThan(BIG.length);
        expect(await metric('http_responses_stalled_total')).toBe(cutBefore);
        // And a new read of the same URL is refused.
        expect((await fetch(url)).status).toBe(403);
      } finally {
        await grant('active');
      }
      expect((await fetch(url, { headers: { range: 'bytes=0-9' } })).status).toBe(206);
    });
  });

  describe('archive mode (STORAGE_ENCRYPTION=crypt4gh): stored encrypted, re-encrypted for each reader', () => {
    /** Four segments and a bit: ranges inside the body cross segment boundaries. */
    const PLAIN = randomBytes(4 * 65_536 + 1_000);
    /** Deposited already encrypted for the archive key, as deposit.vcf.c4gh. */
    const DEPOSITED = randomBytes(65_536 + 7);
    const archiveKey = generateC4ghKeyPair();
    const reader = generateC4ghKeyPair();
    const readerHeader = Buffer.from(publicKeyFile(reader.publicKey)).toString('base64');
    const archiveStorageRoot = join(dir, 'archive-storage');
    let archiveApps: ProvisionerTestApps;
    let archiveEnv: Record<string, string>;
    let archiveUrl: string;
    let readerSecretPath: string;
    const archived = () => request(archiveApps.api.getHttpServer());
    let fileId: string;
    const idOf = (path: string) =>
      `PD-OMICS~SUB-C4GH~DS-C4GH~${createHash('sha256').update(path).digest('hex').slice(0, 20)}`;

    const collect = async (parts: AsyncIterable<Buffer>): Promise<Buffer> => {
      const all: Buffer[] = [];
      for await (const part of parts) all.push(part);
      return Buffer.concat(all);
    };
    /** The reference CLI's plain-text of a Crypt4GH stream, with the reader's secret key. */
    const theirDecrypt = (stream: Buffer) => referenceDecrypt([stream], readerSecretPath, dir);
    const archivedAccessUrl = async (id = fileId) => {
      const res = await archived()
        .post(`${DRS}/objects/${id}/access/https`)
        .send({ passports: [await passportOf()] })
        .expect(200);
      return res.body.url as string;
    };

    beforeAll(async () => {
      dropzone
        .submission('SUB-C4GH', { project: 'PD-OMICS', datasets: ['DS-C4GH'] })
        .dataset('DS-C4GH', {
          submission: 'SUB-C4GH',
          title: 'Encrypted at rest',
          files: {
            'genome.vcf': PLAIN,
            'deposit.vcf.c4gh': await collect(c4ghEncrypt([DEPOSITED], [archiveKey.publicKey])),
          },
        });
      readerSecretPath = join(dir, 'reader.sec');
      writeFileSync(readerSecretPath, await secretKeyFile(reader.secretKey));
      const keyFile = join(dir, 'archive.sec');
      const passphraseFile = join(dir, 'archive.passphrase');
      writeFileSync(keyFile, await secretKeyFile(archiveKey.secretKey, { passphrase: 'archive' }));
      writeFileSync(passphraseFile, 'archive\n');
      const port = await freePort();
      archiveUrl = `http://127.0.0.1:${port}`;
      // A queue and a store of their own: the plain apps' worker never takes these imports.
      archiveEnv = {
        ...apiEnv,
        ...(await queueEnv()),
        STORAGE_ROOT: archiveStorageRoot,
        DRS_PUBLIC_URL: archiveUrl,
        STORAGE_ENCRYPTION: 'crypt4gh',
        C4GH_ARCHIVE_SECRET_KEY_FILE: keyFile,
        C4GH_ARCHIVE_PASSPHRASE_FILE: passphraseFile,
      };
      archiveApps = await startProvisionerApps(archiveEnv);
      await archiveApps.api.listen(port, '127.0.0.1');
      const res = await archived()
        .post('/datasets/dropzone/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: 'DS-C4GH' });
      await waitForImport(archiveApps.api, res.body.id as string);
      const registered = await poll(
        async () => {
          const r = await archived()
            .get(`/imports/${res.body.id}`)
            .set('X-API-Key', TEST_WRITE_KEY);
          const state = (r.body as ImportRecord).catalog;
          return state?.state === 'registered' ? state : undefined;
        },
        'DS-C4GH registered',
        30_000,
      );
      await exposeAndGrant(registered.accession!);
      fileId = idOf('genome.vcf');
    }, 120_000);

    afterAll(() => archiveApps?.close());

    it('serves the archive key at /.well-known/c4gh-recipient; the plain apps answer 404 there', async () => {
      const res = await archived().get('/.well-known/c4gh-recipient').expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(parsePublicKey(res.text)).toEqual(archiveKey.publicKey);
      const off = await api().get('/.well-known/c4gh-recipient').expect(404);
      // A refusal is the JSON envelope, never in the key's media type.
      expect(off.headers['content-type']).toMatch(/^application\/json/);
      expect(off.body.status).toBe('Error');
    });

    it('stores no plain-text: a body the reference CLI decrypts with its header, kept apart', async () => {
      const dataset = join(archiveStorageRoot, 'projects/PD-OMICS/SUB-C4GH/data/raw/DS-C4GH');
      const body = readFileSync(join(dataset, 'genome.vcf'));
      expect(body.includes(PLAIN.subarray(0, 32))).toBe(false);
      const header = readFileSync(join(dataset, '.provisioner/c4gh-headers/genome.vcf'));
      const keyPath = join(dir, 'archive-plain.sec');
      writeFileSync(keyPath, await secretKeyFile(archiveKey.secretKey));
      expect((await referenceDecrypt([header, body], keyPath, dir)).equals(PLAIN)).toBe(true);
    });

    /** The SHA-256 of a stored body, as storage holds it. */
    const storedBodySha256 = (path: string) =>
      createHash('sha256')
        .update(
          readFileSync(
            join(archiveStorageRoot, 'projects/PD-OMICS/SUB-C4GH/data/raw/DS-C4GH', path),
          ),
        )
        .digest('hex');

    it('gives the plain-text size and SHA-256 in the DRS object, and the stored body’s SHA-256 beside it', async () => {
      const res = await archived()
        .post(`${DRS}/objects/${fileId}`)
        .send({ passports: [await passportOf()] })
        .expect(200);
      expect(res.body).toMatchObject({
        name: 'genome.vcf',
        size: PLAIN.length,
        checksums: [
          { type: 'sha-256', checksum: createHash('sha256').update(PLAIN).digest('hex') },
          { type: 'c4gh-body-sha-256', checksum: storedBodySha256('genome.vcf') },
        ],
      });
      // In a bulk answer too.
      const bulk = await archived()
        .post(`${DRS}/objects`)
        .send({ bulk_object_ids: [fileId, idOf('deposit.vcf')], passports: [await passportOf()] })
        .expect(200);
      expect(
        (
          bulk.body as { resolved_drs_object: { checksums: { type: string }[] }[] }
        ).resolved_drs_object.map((object) => object.checksums.map((c) => c.type)),
      ).toEqual([
        ['sha-256', 'c4gh-body-sha-256'],
        ['sha-256', 'c4gh-body-sha-256'],
      ]);
    });

    it('refuses the access URL without a reader key: 400 naming the file', async () => {
      const res = await fetch(await archivedAccessUrl());
      expect(res.status).toBe(400);
      const body = (await res.json()) as { description: string; more: { reason: string } };
      expect(body.more.reason).toBe('c4gh_key_required');
      expect(body.description).toContain('genome.vcf');
      expect(body.description).toContain('X-C4GH-Public-Key');
    });

    it('answers a Crypt4GH stream for X-C4GH-Public-Key (or Htsget-Context-Public-Key) that the reference CLI decrypts', async () => {
      const url = await archivedAccessUrl();
      for (const name of ['X-C4GH-Public-Key', 'Htsget-Context-Public-Key']) {
        const res = await fetch(url, { headers: { [name]: readerHeader } });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-disposition')).toBe(
          'attachment; filename="genome.vcf.c4gh"',
        );
        const stream = Buffer.from(await res.arrayBuffer());
        expect(Number(res.headers.get('content-length'))).toBe(stream.length);
        expect((await theirDecrypt(stream)).equals(PLAIN)).toBe(true);
      }
      const both = await fetch(url, {
        headers: { 'X-C4GH-Public-Key': readerHeader, 'Htsget-Context-Public-Key': readerHeader },
      });
      expect(both.status).toBe(400);
      const bad = await fetch(url, { headers: { 'X-C4GH-Public-Key': 'bm90IGEga2V5' } });
      expect(bad.status).toBe(400);
    });

    it('serves a deposit encrypted for the archive key under its name without .c4gh, with its plain-text checksum', async () => {
      const id = idOf('deposit.vcf');
      const object = await archived()
        .post(`${DRS}/objects/${id}`)
        .send({ passports: [await passportOf()] })
        .expect(200);
      expect(object.body).toMatchObject({
        name: 'deposit.vcf',
        size: DEPOSITED.length,
        checksums: [
          { type: 'sha-256', checksum: createHash('sha256').update(DEPOSITED).digest('hex') },
          { type: 'c4gh-body-sha-256', checksum: storedBodySha256('deposit.vcf') },
        ],
      });
      const res = await fetch(await archivedAccessUrl(id), {
        headers: { 'X-C4GH-Public-Key': readerHeader },
      });
      expect(res.status).toBe(200);
      const stream = Buffer.from(await res.arrayBuffer());
      expect((await theirDecrypt(stream)).equals(DEPOSITED)).toBe(true);
    });

    it('applies HTTP ranges to that stream, so a client resumes it as SDA’s clients do', async () => {
      const url = await archivedAccessUrl();
      const whole = Buffer.from(
        await (await fetch(url, { headers: { 'X-C4GH-Public-Key': readerHeader } })).arrayBuffer(),
      );
      // Cut mid-segment; the rest comes from another request, with another header of the same size.
      const cut = whole.length - 100_000;
      const rest = await fetch(url, {
        headers: { 'X-C4GH-Public-Key': readerHeader, range: `bytes=${cut}-` },
      });
      expect(rest.status).toBe(206);
      expect(rest.headers.get('content-range')).toBe(
        `bytes ${cut}-${whole.length - 1}/${whole.length}`,
      );
      const tail = Buffer.from(await rest.arrayBuffer());
      expect(tail).toEqual(whole.subarray(cut));
      expect(
        (await theirDecrypt(Buffer.concat([whole.subarray(0, cut), tail]))).equals(PLAIN),
      ).toBe(true);
      // A range that ends inside the header.
      const head = await fetch(url, {
        headers: { 'X-C4GH-Public-Key': readerHeader, range: 'bytes=0-9' },
      });
      expect(
        Buffer.from(await head.arrayBuffer())
          .subarray(0, 8)
          .toString(),
      ).toBe('crypt4gh');
    });

    it('X-C4GH-Plaintext-Range beside the key: a stream with an edit list that the reference CLI decrypts to exactly those bytes', async () => {
      const url = await archivedAccessUrl();
      const size = PLAIN.length;
      // Mid-segment to mid-segment, one byte, and a range whose last byte is past the end.
      for (const [asked, start, end] of [
        ['bytes=70000-200000', 70_000, 200_000],
        ['bytes=65535-65535', 65_535, 65_535],
        [`bytes=${size - 10}-${size + 50}`, size - 10, size - 1],
        ['bytes=-100', size - 100, size - 1],
      ] as const) {
        const res = await fetch(url, {
          headers: { 'X-C4GH-Public-Key': readerHeader, 'X-C4GH-Plaintext-Range': asked },
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-c4gh-plaintext-content-range')).toBe(
          `bytes ${start}-${end}/${size}`,
        );
        expect(res.headers.get('content-disposition')).toBe(
          'attachment; filename="genome.vcf.c4gh"',
        );
        const stream = Buffer.from(await res.arrayBuffer());
        // The header and the segments holding the range: at most two segments more than it.
        expect(stream.length).toBeLessThan(end - start + 1 + 2 * 65_564 + 1_000);
        expect((await theirDecrypt(stream)).equals(PLAIN.subarray(start, end + 1))).toBe(true);
      }
    });

    it('refuses a plain-text range it cannot answer: 400 or 416 in the envelope, naming the file', async () => {
      const url = await archivedAccessUrl();
      const refusal = async (headers: Record<string, string>) => {
        const res = await fetch(url, { headers });
        const body = (await res.json()) as { description: string; more: { reason: string } };
        expect(body.description).toContain('genome.vcf');
        return `${res.status} ${body.more.reason}`;
      };
      const key = { 'X-C4GH-Public-Key': readerHeader };
      expect(await refusal({ ...key, 'X-C4GH-Plaintext-Range': 'bytes=10-5' })).toBe(
        '400 c4gh_range_invalid',
      );
      expect(await refusal({ ...key, 'X-C4GH-Plaintext-Range': 'bytes=1-2,5-6' })).toBe(
        '400 c4gh_range_invalid',
      );
      expect(await refusal({ ...key, 'X-C4GH-Plaintext-Range': `bytes=${PLAIN.length}-` })).toBe(
        '416 c4gh_range_not_satisfiable',
      );
      // A range needs a key to encrypt it for.
      expect(await refusal({ 'X-C4GH-Plaintext-Range': 'bytes=0-9' })).toBe(
        '400 c4gh_key_required',
      );
      // A plain dataset's object has no plain-text range: HTTP ranges are its ranges.
      const plainUrl = await accessUrl((await objectIds()).get('reads.bam')!);
      const plain = await fetch(plainUrl, { headers: { 'X-C4GH-Plaintext-Range': 'bytes=0-9' } });
      expect(plain.status).toBe(400);
      expect(((await plain.json()) as { more: { reason: string } }).more.reason).toBe(
        'c4gh_not_encrypted',
      );
    });

    describe('DRS_PLAINTEXT_DOWNLOADS=on (an https:// DRS_PUBLIC_URL): a reader without a key gets the plain-text', () => {
      let plainApi: NestExpressApplication;
      let plainPort: number;

      beforeAll(async () => {
        plainPort = await freePort();
        plainApi = await createProvisionerApiApp(
          provisionerTestSettings({
            // The archive apps' database, store and key.
            ...archiveEnv,
            // TLS ends in front of the API (an ingress): the URLs it gives are https://.
            DRS_PUBLIC_URL: `https://127.0.0.1:${plainPort}`,
            DRS_PLAINTEXT_DOWNLOADS: 'on',
          }),
        );
        await plainApi.listen(plainPort, '127.0.0.1');
      });

      afterAll(() => plainApi?.close());

      it('sends the decrypted bytes, by range too, with the plain-text SHA-256 as ETag; a key still gets Crypt4GH', async () => {
        const res = await request(plainApi.getHttpServer())
          .post(`${DRS}/objects/${fileId}/access/https`)
          .send({ passports: [await passportOf()] });
        if (res.status !== 200) throw new Error(JSON.stringify(res.body));
        const https = res.body.url as string;
        expect(https.startsWith(`https://127.0.0.1:${plainPort}/`)).toBe(true);
        const url = https.replace(/^https:/, 'http:');
        const whole = await fetch(url);
        expect(whole.status).toBe(200);
        expect(whole.headers.get('etag')).toBe(
          `"${createHash('sha256').update(PLAIN).digest('hex')}"`,
        );
        expect(whole.headers.get('content-disposition')).toBe('attachment; filename="genome.vcf"');
        expect(Buffer.from(await whole.arrayBuffer()).equals(PLAIN)).toBe(true);
        const part = await fetch(url, { headers: { range: 'bytes=65530-131080' } });
        expect(part.status).toBe(206);
        expect(Buffer.from(await part.arrayBuffer())).toEqual(PLAIN.subarray(65_530, 131_081));
        const encrypted = await fetch(url, { headers: { 'X-C4GH-Public-Key': readerHeader } });
        expect((await theirDecrypt(Buffer.from(await encrypted.arrayBuffer()))).equals(PLAIN)).toBe(
          true,
        );
      });
    });
  });

  describe('DRS_BYTES_OFFLOAD=nginx: the API checks the access URL, a real nginx sends the bytes', () => {
    const OFFLOAD_SIGNING_KEY = 'offload-test-signing-key-0123456789abcdef';
    let offloadApi: NestExpressApplication;
    let nginx: OffloadNginx;
    const offloaded = () => request(offloadApi.getHttpServer());
    const offloadedUrl = async (id: string) => {
      const res = await offloaded()
        .post(`${DRS}/objects/${id}/access/https`)
        .send({ passports: [await passportOf()] })
        .expect(200);
      return res.body.url as string;
    };

    beforeAll(async () => {
      const nginxPort = await freePort();
      const apiPort = await freePort();
      offloadApi = await createProvisionerApiApp(
        provisionerTestSettings({
          ...apiEnv,
          DRS_PUBLIC_URL: `http://127.0.0.1:${nginxPort}`,
          DRS_BYTES_OFFLOAD: 'nginx',
          DRS_URL_SIGNING_KEY: OFFLOAD_SIGNING_KEY,
        }),
      );
      await offloadApi.listen(apiPort, '127.0.0.1');
      nginx = await startOffloadNginx(
        join(dir, 'nginx'),
        `127.0.0.1:${apiPort}`,
        storageRoot,
        nginxPort,
      );
    });

    afterAll(async () => {
      await nginx?.stop();
      await offloadApi?.close();
    });

    it('sends the stored bytes whole, by range and for HEAD, with our headers and nginx’s ETag', async () => {
      const url = await offloadedUrl((await objectIds()).get('reads.bam')!);
      expect(url.startsWith(nginx.url)).toBe(true);
      const whole = await fetch(url);
      expect(whole.status).toBe(200);
      const body = Buffer.from(await whole.arrayBuffer());
      expect(createHash('sha256').update(body).digest('hex')).toBe(
        createHash('sha256').update(made.bam).digest('hex'),
      );
      expect(whole.headers.get('content-disposition')).toBe('attachment; filename="reads.bam"');
      expect(whole.headers.get('cache-control')).toBe('private, no-store');
      expect(whole.headers.get('x-accel-redirect')).toBeNull();
      expect(whole.headers.get('etag')).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);

      const head = await fetch(url, { method: 'HEAD' });
      expect(head.headers.get('content-length')).toBe(String(made.bam.length));

      const part = await fetch(url, { headers: { range: 'bytes=10-109' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 10-109/${made.bam.length}`);
      expect(Buffer.from(await part.arrayBuffer())).toEqual(made.bam.subarray(10, 110));

      const past = await fetch(url, { headers: { range: `bytes=${made.bam.length + 5}-` } });
      expect(past.status).toBe(416);

      // A real client: curl's range equals the file's bytes.
      const { stdout } = await promisify(execFile)('curl', ['-sf', '-r', '5-24', url], {
        encoding: 'buffer',
      });
      expect(stdout).toEqual(made.bam.subarray(5, 25));
    });

    it('logs each read as a JSON line under the request id the API logs it under, never the access URL’s token', async () => {
      const url = await offloadedUrl((await objectIds()).get('reads.bam')!);
      const token = new URL(url).pathname.split('/')[2];
      const requestId = `offload-log-${Date.now()}`;
      const read = await fetch(url, { headers: { 'x-request-id': requestId } });
      expect(read.status).toBe(200);
      // The API's answer (the redirect nginx followed) echoes the id it logged the read under.
      expect(read.headers.get('x-request-id')).toBe(requestId);
      await read.arrayBuffer();
      // Case as a client may spell it: Express routes it, so nginx must redact it too.
      await (await fetch(url.replace('/drs-bytes/', '/DRS-Bytes/'))).arrayBuffer();
      const lines = await poll(
        () => {
          const found = nginx
            .accessLog()
            .split('\n')
            .filter((line) => line.includes('RS-Bytes/') || line.includes(requestId));
          return found.length >= 2 ? found : undefined;
        },
        'the offload nginx logging both reads',
        10_000,
        20,
      );
      const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(parsed[0]).toMatchObject({
        request_id: requestId,
        method: 'GET',
        status: 200,
        url: expect.stringMatching(/^\/drs-bytes\/\[REDACTED\]\/reads\.bam$/),
      });
      expect(parsed[1].url).toMatch(/^\/DRS-Bytes\/\[REDACTED\]\//);
      expect(nginx.accessLog()).not.toContain(token.split('.')[1]);
    });

    it('finds a file whose name needs encoding (a space)', async () => {
      const url = await offloadedUrl((await objectIds()).get('notes/read me.txt')!);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('hello');
    });

    it('refuses a forged or cut token in the DRS error body, and nginx sends no file', async () => {
      const url = await offloadedUrl((await objectIds()).get('reads.bam')!);
      const token = new URL(url).pathname.split('/')[2];
      const forged = url.replace(token, `${token.split('.')[0]}.x`);
      const res = await fetch(forged);
      expect(res.status).toBe(403);
      const body = (await res.json()) as { status_code: number };
      expect(body.status_code).toBe(403);
    });

    it('refuses an expired URL and one another deployment signed, and nginx sends no file', async () => {
      const url = await offloadedUrl((await objectIds()).get('reads.bam')!);
      const token = new URL(url).pathname.split('/')[2];
      const object = (
        JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()) as {
          o: string;
        }
      ).o;
      // Signed with the deployment's own key, but an hour ago with a lifetime of one second.
      const expired = new AccessUrls({ signing: OFFLOAD_SIGNING_KEY }, 1).issue(
        object,
        READER,
        Date.now() / 1000 - 3600,
      );
      // The plain API's access URL: the same object, another key.
      const foreign = new URL(await accessUrl((await objectIds()).get('reads.bam')!)).pathname;
      for (const [path, code] of [
        [url.replace(token, expired).replace(nginx.url, ''), 'url_expired'],
        [foreign, undefined],
      ] as const) {
        const res = await fetch(`${nginx.url}${path}`);
        expect([path, res.status]).toEqual([path, 403]);
        const body = (await res.json()) as { status_code: number; msg: string };
        expect(body.status_code).toBe(403);
        if (code) expect(JSON.stringify(body)).toContain('expired');
        expect(res.headers.get('content-disposition')).toBeNull();
      }
    });

    it('does not follow a symbolic link planted in the storage tree', async () => {
      const url = await offloadedUrl((await objectIds()).get('notes/read me.txt')!);
      const stored = (readdirSync(storageRoot, { recursive: true }) as string[]).find((path) =>
        path.endsWith('/notes/read me.txt'),
      )!;
      const notes = join(storageRoot, dirname(stored));
      const dataset = dirname(notes);
      const mode = statSync(dataset).mode & 0o7777;
      chmodSync(dataset, 0o755);
      // The directory swapped for a link to a copy of it: the same bytes, reached through a link.
      renameSync(notes, `${notes}.real`);
      symlinkSync(`${notes}.real`, notes);
      try {
        // The provisioner checks the file itself (a regular file of the recorded size) and hands
        // it over; nginx's disable_symlinks refuses the link on the way (its own error page, not
        // the DRS body: opened without following links, the linked directory is no directory).
        const res = await fetch(url);
        expect([res.status, res.headers.get('content-type')]).toEqual([404, 'text/html']);
        expect(await res.text()).not.toContain('hello');
      } finally {
        rmSync(notes);
        renameSync(`${notes}.real`, notes);
        chmodSync(dataset, mode);
      }
      expect((await fetch(url)).status).toBe(200);
      // nginx logs the refusal's request line in its error log: never with the token.
      const token = new URL(url).pathname.split('/')[2];
      expect(nginx.errorLog()).not.toContain(token.split('.')[1]);
      expect(nginx.accessLog()).not.toContain(token.split('.')[1]);
    });

    it('writes no token to any log while the API is down (502), in any spelling of the route', async () => {
      const url = await offloadedUrl((await objectIds()).get('reads.bam')!);
      const path = new URL(url).pathname;
      const token = path.split('/')[2];
      // An nginx whose API has gone (a restart): every request is a 502 nginx logs as an error.
      const gone = await startOffloadNginx(
        join(dir, 'nginx-gone'),
        `127.0.0.1:${await freePort()}`,
        storageRoot,
      );
      try {
        const spellings = [
          path,
          `/${path}`,
          path.replace('/drs-bytes/', '/./drs-bytes/'),
          path.replace('/drs-bytes/', '/drs-bytes;x/'),
          path.replace('/drs-bytes/', '/%64rs-bytes/'),
          `/anything?u=${token}`,
        ];
        for (const spelling of spellings) {
          // As sent, byte for byte: a client library would normalise `/./` and the like.
          const res = await sendRaw(
            Number(new URL(gone.url).port),
            `GET ${spelling} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
          );
          expect([spelling, res?.status]).toEqual([spelling, 502]);
        }
        const lines = await poll(
          () => {
            const found = gone.accessLog().trim().split('\n').filter(Boolean);
            return found.length >= spellings.length ? found : undefined;
          },
          'an access line per request',
          10_000,
          20,
        );
        for (const line of lines) {
          expect(JSON.parse(line)).toMatchObject({ status: 502, upstream_status: '502' });
        }
        for (const log of [gone.accessLog(), gone.errorLog()]) {
          expect(log).not.toContain(token.split('.')[1]);
          expect(log).not.toContain(token.split('.')[0]);
        }
      } finally {
        await gone.stop();
      }
    });

    it('answers 404 to a direct request for the internal prefix', async () => {
      const direct = await fetch(`${nginx.url}/_drs_internal/`);
      expect(direct.status).toBe(404);
      const stored = (readdirSync(storageRoot, { recursive: true }) as string[]).find((path) =>
        path.endsWith('/reads.bam'),
      );
      expect(stored).toBeDefined();
      const res = await fetch(`${nginx.url}/_drs_internal/${stored!}`);
      expect(res.status).toBe(404);
    });
  });
});
