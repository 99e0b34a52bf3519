// Release N-1 on schema N (expand/contract): during an upgrade the previous release's pods keep
// serving while the migration Job changes the schema under them, then while the new pods roll
// out. So the image of deploy/upgrade-from-ref is run against the database before the upgrade
// and again after the working tree's migrations ran on it: every GET route its own OpenAPI
// document lists (with the global key and without one) must answer the same status and body,
// and REMS's webhook routes (a grant, then its revocation, for a person new each time) the same.
import assert from 'node:assert/strict';
import { request } from './fixtures.mjs';
import { CatalogReplica } from './catalog-replicas.mjs';

/** The webhook on, for a caller at `allowed` (an address or range, `*` = any). */
export const webhookEnv = (allowed) => ({
  ACCESSREQ_INTEGRATION_ENABLED: 'true',
  ACCESSREQ_ALLOWED_IP_ADDRESSES: allowed,
});

/** Query parameters a route requires, as a caller would send them. */
const QUERIES = { '/api/termsearch/{category}': '?search=diab&page=1' };
const NOT_READS = /^\/(metrics|health\/|api\/docs)/;

export class PreviousRelease {
  /**
   * @param {object} o stack, image (the previous release's), envFile (the catalog's env file),
   *   port (in the pod) and url (where this process reaches that port), globalKey, and the
   *   values of path parameters: accession (a dataset), oidc (a person)
   */
  constructor(o) {
    Object.assign(this, o);
    this.round = 0;
  }

  async serve() {
    this.replica = new CatalogReplica({
      stack: this.stack,
      image: this.image,
      envFile: this.envFile,
      port: this.port,
      name: 'catalog-previous',
      // The caller is this process, through podman's port forwarding: its address as the
      // container sees it depends on podman's network backend.
      env: webhookEnv('*'),
    });
    await this.replica.start();
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const ready = await request(`${this.url}/health/ready`, { timeoutMs: 3000 }).catch(
        () => null,
      );
      if (ready?.status === 200) return;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`the previous release did not get ready:\n${await this.replica.logs()}`);
  }

  async stop() {
    await this.replica?.destroy();
  }

  /** Its GET routes, from the OpenAPI document it serves, with their parameters filled in. */
  async readRoutes() {
    const { status, text } = await request(`${this.url}/api/docs-json`);
    assert.equal(status, 200, 'no OpenAPI document');
    const values = { category: 'disease', accession: this.accession, user_oidc_id: this.oidc };
    return Object.entries(JSON.parse(text).paths)
      .filter(([path, ops]) => ops.get && !NOT_READS.test(path))
      .map(
        ([path]) =>
          path.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(values[name])) +
          (QUERIES[path] ?? ''),
      );
  }

  /** Every read route, with the global key and without a key: status and body of each. */
  async reads() {
    const answers = {};
    for (const path of await this.readRoutes()) {
      for (const [caller, headers] of [
        ['global key', { 'X-API-Key': this.globalKey }],
        ['no key', {}],
      ]) {
        const { status, text } = await request(`${this.url}${path}`, { headers });
        answers[`GET ${path} (${caller})`] = { status, text };
      }
    }
    return answers;
  }

  /** REMS grants a dataset to a new person, then revokes it: the answers and what they did. */
  async webhooks() {
    this.round += 1;
    const user = `previous-release-${Date.now()}-${this.round}`;
    const body = [
      {
        application: 9000 + this.round,
        resource: this.accession,
        user,
        mail: `${user}@example.org`,
        end: null,
      },
    ];
    const permissions = async () => {
      const { status, text } = await request(
        `${this.url}/api/permissions/${encodeURIComponent(user)}`,
        { headers: { 'X-API-Key': this.globalKey } },
      );
      return { status, text };
    };
    const post = async (path, items) => {
      const { status, text } = await request(`${this.url}${path}`, { method: 'POST', body: items });
      return { status, text };
    };
    const granted = await post('/api/accessreq', body);
    const afterGrant = await permissions();
    const revoked = await post('/api/accessreq/revoke', [
      { ...body[0], end: new Date().toISOString() },
    ]);
    return {
      'POST /api/accessreq': granted,
      'GET /api/permissions after the grant': afterGrant,
      'POST /api/accessreq/revoke': revoked,
      'GET /api/permissions after the revocation': await permissions(),
    };
  }
}

/** Answers that differ between two recordings, each named with both sides' status and body. */
export function differences(before, after) {
  const out = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [a, b] = [before[key], after[key]];
    if (a?.status !== b?.status || a?.text !== b?.text)
      out.push(
        `${key}: ${a?.status} ${a?.text.slice(0, 80)} -> ${b?.status} ${b?.text.slice(0, 80)}`,
      );
  }
  return out;
}

/** A dataset REMS may grant (one with an exposure) and a person, for routes that name them. */
export function sampleOf(psql) {
  return {
    accession: psql(
      `SELECT d.elu_accession FROM datasets d WHERE d.elu_accession IS NOT NULL
        AND EXISTS (SELECT 1 FROM exposures e WHERE e.dataset_id = d.id) ORDER BY d.id LIMIT 1`,
    ),
    oidc: psql('SELECT oidc_id FROM users WHERE oidc_id IS NOT NULL ORDER BY id LIMIT 1'),
  };
}

/**
 * Before the upgrade: the webhook's writes first, so the reads are recorded on the data they
 * meet after the upgrade too. Resolves the recording.
 */
export async function recordAnswers(previous) {
  try {
    await previous.serve();
    const webhooks = await previous.webhooks();
    const granted = webhooks['POST /api/accessreq'];
    assert.equal(granted.status, 200, granted.text);
    return { webhooks, reads: await previous.reads() };
  } finally {
    await previous.stop();
  }
}

/** After the upgrade: the same reads, then the webhook; resolves the check's figure. */
export async function answersAsBefore(previous, recorded, migrations) {
  assert.ok(recorded, 'nothing recorded before the upgrade');
  try {
    await previous.serve();
    const reads = await previous.reads();
    const webhooks = await previous.webhooks();
    const changed = [
      ...differences(recorded.reads, reads),
      ...differences(recorded.webhooks, webhooks),
    ];
    assert.deepEqual(changed, [], `${changed.length} answers changed`);
    assert.equal(webhooks['POST /api/accessreq'].status, 200);
    assert.ok(webhooks['GET /api/permissions after the grant'].text.includes(previous.accession));
    const routes = (await previous.readRoutes()).length + 2;
    return `${routes} routes answer as before (on ${migrations} migrations: ${Object.keys(reads).length} reads with and without a key, REMS's grant and revocation)`;
  } finally {
    await previous.stop();
  }
}
