import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_GLOBAL_KEY } from './catalog-process';
import { withClient } from './bench-database';
import { timeGet, timePost } from './http-load';
import { freePort } from './processes';
import { BENCH_WRITE_KEY } from './provisioner-process';
import { poll } from '../../../test/support/wait';

/** What the catalog stores of a key: its SHA-256, hex. */
export const sha256Hex = (key: string) => createHash('sha256').update(key).digest('hex');

/** A fresh RSA key for the catalog's visas (GA4GH_VISA_KEY_FILE), written to `path`. */
export function writeVisaKey(path: string): void {
  writeFileSync(
    path,
    generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }),
    { mode: 0o600 },
  );
}

/** The project in the catalog (global key), and its submission `SUB-DRS` in the drop zone. */
export async function drsProject(
  catalogUrl: string,
  dropzone: string,
  project: { acronym: string; name: string; datasets: string[] },
): Promise<void> {
  const created = await timePost(
    `${catalogUrl}/api/projects`,
    JSON.stringify({ items: [{ acronym: project.acronym, name: project.name }] }),
    { 'X-API-Key': BENCH_GLOBAL_KEY },
  );
  if (created.status !== 200) throw new Error(`POST /api/projects: ${created.status}`);
  mkdirSync(join(dropzone, 'submissions/SUB-DRS'), { recursive: true });
  writeFileSync(
    join(dropzone, 'submissions/SUB-DRS/submission.json'),
    JSON.stringify({
      ref: 'SUB-DRS',
      title: project.name,
      status: 'completed',
      project: project.acronym,
      datasets: project.datasets,
    }),
  );
}

/** Imports a drop-zone dataset through the provisioner API; its catalog accession once registered. */
export async function importAndRegister(apiUrl: string, datasetId: string): Promise<string> {
  const write = { 'X-API-Key': BENCH_WRITE_KEY };
  const queued = await timePost(
    `${apiUrl}/datasets/dropzone/import`,
    JSON.stringify({ dataset_id: datasetId }),
    write,
  );
  const importId = (JSON.parse(queued.body.toString()) as { id: string }).id;
  return poll(
    async () => {
      const r = await timeGet(`${apiUrl}/imports/${importId}`, write);
      const record = JSON.parse(r.body.toString()) as {
        catalog: { state: string; accession: string } | null;
      };
      return record.catalog?.state === 'registered' ? record.catalog.accession : undefined;
    },
    `${datasetId} imported and registered`,
    600_000,
    100,
  );
}

/**
 * `reader` (an identity-provider subject) granted the datasets, exposed at an endpoint named
 * `endpoint`; the reader's passport of the catalog's visas.
 */
export async function grantedPassports(
  catalogUrl: string,
  databaseUrl: string,
  reader: string,
  accessions: string[],
  endpoint: string,
): Promise<string[]> {
  await withClient(databaseUrl, async (c) => {
    await c.query(`INSERT INTO users (username, oidc_id) VALUES ($1, $1)`, [reader]);
    await c.query(
      `INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ($1, 'https://x/\${entity_id}', $2)`,
      [endpoint, sha256Hex(randomBytes(24).toString('hex'))],
    );
    await c.query(
      `INSERT INTO exposures (form_id, dataset_id, endpoint_id)
       SELECT 1, d.id, (SELECT id FROM endpoints WHERE name = $2) FROM datasets d
       WHERE d.elu_accession = ANY($1)`,
      [accessions, endpoint],
    );
    await c.query(
      `INSERT INTO accesses (dataset_id, user_id, status, granted_on)
       SELECT d.id, u.id, 'active', now()::date FROM datasets d, users u
       WHERE d.elu_accession = ANY($1) AND u.oidc_id = $2`,
      [accessions, reader],
    );
  });
  const visas = JSON.parse(
    (
      await timeGet(`${catalogUrl}/api/ga4gh/permissions/${reader}`, {
        'X-API-Key': BENCH_GLOBAL_KEY,
      })
    ).body.toString(),
  ) as { ga4gh_passport_v1: string[] };
  return visas.ga4gh_passport_v1;
}

/**
 * The keys between a catalog and a provisioner doing DRS, a visa key file under `dir`, and the
 * catalog's port chosen beforehand (its URL is the visas' issuer): `catalogEnv` for the catalog.
 */
export async function drsKeys(dir: string) {
  const registrationKey = randomBytes(24).toString('hex');
  const brokerKey = randomBytes(24).toString('hex');
  const keyFile = join(dir, 'visa-key.pem');
  writeVisaKey(keyFile);
  const catalogPort = await freePort();
  const catalogUrl = `http://127.0.0.1:${catalogPort}`;
  return {
    registrationKey,
    brokerKey,
    catalogPort,
    catalogUrl,
    catalogEnv: {
      CATALOG_SOURCE: catalogUrl,
      GA4GH_VISA_KEY_FILE: keyFile,
      GA4GH_BROKER_API_KEY_SHA256: sha256Hex(brokerKey),
      REGISTRATION_API_KEY_SHA256: sha256Hex(registrationKey),
    },
  };
}
