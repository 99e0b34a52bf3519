import type { INestApplicationContext } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { validateInput } from '@app/errors';
import {
  CreateEndpointBody,
  CreateExposureBody,
  GrantBody,
  WithdrawExposureBody,
} from '../admin/admin-catalog.dto';
import { CreateUserBody, UpdateUserBody } from '../admin/admin-users.dto';
import { EndpointsAdminService } from '../admin/endpoints-admin.service';
import { ExposuresAdminService } from '../admin/exposures-admin.service';
import { GrantsAdminService } from '../admin/grants-admin.service';
import { PublishingService } from '../admin/publishing.service';
import { UsersAdminService } from '../admin/users-admin.service';
import { AccessesRepository, NewHeldAccess } from '../accesses/accesses.repository';
import { AuditActor, AuditService } from '../audit/audit.service';
import { TrackedRecordsRepository } from '../common/tracked-records.repository';
import { ContactsRepository } from '../contacts/contacts.repository';
import { SessionLocksRepository } from '../database/session-locks.repository';
import { DatasetsRepository } from '../datasets/datasets.repository';
import { EndpointsRepository } from '../endpoints/endpoints.repository';
import { CatalogImportService } from '../catalog-imports/catalog-import.service';
import { UsersRepository } from '../users/users.repository';
import {
  DEMO_COHORTS,
  DEMO_CONTACTS,
  DEMO_RESEARCHER,
  DEMO_ENDPOINTS,
  DEMO_EXPOSURES,
  DEMO_PARTNERS,
  DEMO_USERS,
} from './demo-catalog';
import { demoImportDocuments, demoUserEmail } from './demo-import-documents';
import type { DemoKeys } from './demo-keys';

/** Serialises concurrent loaders (e.g. two replicas starting on an empty database). */
const DEMO_LOCK_ID = 731_104_002;

/** The author of every demo change in the audit trail. */
const DEMO_ACTOR: AuditActor = { kind: 'cli', name: 'demo-data' };

/** The audit entry that says the demo catalog is complete: written last, with the accesses. */
const LOADED = { action: 'load-demo', objectType: 'demo', objectId: 'catalog' } as const;

/**
 * Loads the demo catalog the way an operator loads data, through the services of the HTTP API
 * and the `catalog` command-line tool, each step in its own transaction: the records as catalog
 * import documents (partners first, then the users the other documents name, holding `keys`),
 * publishing, endpoints (holding `keys`), exposures and grants; the accesses, which no import or
 * command writes, through their repository, with the audit entry that marks the load complete.
 *
 * Idempotent: once that entry exists nothing is written. A load interrupted part-way is
 * completed by the next one (each step skips what is there, imports update in place), and
 * concurrent loaders wait for each other on an advisory lock.
 */
export async function loadDemoData(
  app: INestApplicationContext,
  keys: DemoKeys,
): Promise<DemoKeys & { loaded: boolean }> {
  // A connection of its own holds the lock while the services use the pool's.
  const lock = await app.get(SessionLocksRepository).lock(DEMO_LOCK_ID);
  try {
    if (await isLoaded(app)) return { ...keys, loaded: false };
    await writeDemoCatalog(app, keys);
    return { ...keys, loaded: true };
  } finally {
    await lock.release();
  }
}

async function isLoaded(app: INestApplicationContext): Promise<boolean> {
  const { objectType, objectId } = LOADED;
  const { results } = await app
    .get(AuditService)
    .list({ objectType, objectId, page: 1, pageSize: 1 });
  return results.length > 0;
}

async function writeDemoCatalog(app: INestApplicationContext, keys: DemoKeys): Promise<void> {
  const manager = app.get(DataSource).manager;
  const imports = app.get(CatalogImportService);
  const [partners, ...others] = demoImportDocuments();
  await imports.import(partners.kind, partners.document, DEMO_ACTOR);

  // Users before the documents that name them (custodians and personnel are found by email).
  const users = app.get(UsersAdminService);
  const usersRepository = app.get(UsersRepository);
  const userKeys = new Map(keys.users.map((u) => [u.username, u.apiKey]));
  for (const u of DEMO_USERS) {
    if ((await usersRepository.idByUsername(manager, u.username)) !== undefined) continue;
    const body = await validateInput(
      CreateUserBody,
      {
        username: u.username,
        first_name: u.first,
        last_name: u.last,
        email: demoUserEmail(u.username),
        oidc_id: u.oidc,
        groups: u.groups,
        affiliation: 'LCSB',
      },
      'body',
    );
    // Users the demo prints no key for still get one, as create-user gives every user: unshown.
    const created = await users.create(body, DEMO_ACTOR, userKeys.get(u.username));
    if (!u.active) {
      const update = await validateInput(UpdateUserBody, { is_active: false }, 'body');
      await users.update(created.id, update, DEMO_ACTOR);
    }
  }
  for (const { kind, document } of others) await imports.import(kind, document, DEMO_ACTOR);

  const publishing = app.get(PublishingService);
  for (const p of DEMO_PARTNERS.filter((p) => p.published))
    await publishing.setPublished(
      'partner',
      await idByName(app, 'partners', p.name),
      true,
      DEMO_ACTOR,
    );
  for (const c of DEMO_COHORTS.filter((c) => c.published))
    await publishing.setPublished(
      'cohort',
      await idByName(app, 'cohorts', c.name),
      true,
      DEMO_ACTOR,
    );

  const endpoints = app.get(EndpointsAdminService);
  const endpointsRepository = app.get(EndpointsRepository);
  const endpointKeys = new Map(keys.endpoints.map((e) => [e.name, e.apiKey]));
  for (const e of DEMO_ENDPOINTS) {
    if ((await endpointsRepository.idByName(manager, e.name)) !== undefined) continue;
    const body = await validateInput(
      CreateEndpointBody,
      { name: e.name, url_pattern: e.urlPattern },
      'body',
    );
    await endpoints.create(body, DEMO_ACTOR, endpointKeys.get(e.name));
  }

  const exposures = app.get(ExposuresAdminService);
  for (const [title, endpointIndex, formId, deprecated] of DEMO_EXPOSURES) {
    const endpoint = DEMO_ENDPOINTS[endpointIndex].name;
    const datasetId = await datasetIdByTitle(app, title);
    const endpointId = await endpointsRepository.idByName(manager, endpoint);
    if (
      endpointId !== undefined &&
      (await endpointsRepository.hasExposure(manager, datasetId, endpointId))
    )
      continue;
    const body = await validateInput(
      CreateExposureBody,
      {
        dataset: title,
        endpoint,
        form_id: formId,
        request_pdf_enabled: endpointIndex === 0,
      },
      'body',
    );
    const exposure = await exposures.create(body, DEMO_ACTOR);
    if (deprecated) {
      const reason = await validateInput(
        WithdrawExposureBody,
        { reason: 'Superseded by a newer release.' },
        'body',
      );
      await exposures.withdraw(exposure.id, reason, DEMO_ACTOR);
    }
  }

  // Protected grants for the demo viewer: one dataset directly, one project through the grant.
  const grants = app.get(GrantsAdminService);
  for (const [objectType, object] of [
    ['dataset', await datasetIdByTitle(app, 'EPIC-DREM sequencing data')],
    ['project', 'IRON-DEF'],
  ] as const) {
    const body = await validateInput(
      GrantBody,
      { user: 'victor.viewer', object_type: objectType, object, permission: 'protected' },
      'body',
    );
    await grants.grant(body, DEMO_ACTOR);
  }

  await writeAccessesAndMarkLoaded(app);
}

/**
 * The accesses the demo shows (one a REMS grant), written through their repository: no import
 * or command records an access by hand. In one transaction with the audit entry that marks the
 * demo complete, so they are written exactly once.
 */
async function writeAccessesAndMarkLoaded(app: INestApplicationContext): Promise<void> {
  const users = app.get(UsersRepository);
  const contacts = app.get(ContactsRepository);
  const accesses = app.get(AccessesRepository);
  const audit = app.get(AuditService);
  await app.get(DataSource).transaction(async (m) => {
    const userId = async (username: string) =>
      required(await users.idByUsername(m, username), username);
    const jensen = required(
      DEMO_CONTACTS.find((c) => c.key === 'jensen'),
      'jensen',
    );
    const contactId = required(
      await contacts.idByNamesAndEmail(
        m,
        jensen.first.toLowerCase(),
        jensen.last.toLowerCase(),
        jensen.email.toLowerCase(),
      ),
      'jensen',
    );
    const viewer = { kind: 'user' as const, id: await userId('victor.viewer') };
    const steward = await userId('sara.steward');
    const today = new Date().toISOString().slice(0, 10);
    const held: (NewHeldAccess & { storage?: true })[] = [
      {
        datasetId: await datasetIdByTitle(app, 'PD-OMICS plasma metabolomics', m),
        holder: viewer,
        status: 'active',
        grantedOn: today,
        grantExpiresOn: null,
        accessNotes: 'Analysis for the PD-OMICS consortium.',
        createdById: steward,
        wasGeneratedAutomatically: false,
        applicationId: null,
        storage: true,
      },
      {
        datasetId: await datasetIdByTitle(app, 'EPIC-DREM sequencing data', m),
        holder: { kind: 'contact', id: contactId },
        status: 'active',
        grantedOn: today,
        grantExpiresOn: '2099-12-31',
        accessNotes: 'Set automatically by REMS data access request #4056',
        createdById: null,
        wasGeneratedAutomatically: true,
        applicationId: 4056,
      },
      {
        datasetId: await datasetIdByTitle(app, 'PD-OMICS blood transcriptomics', m),
        holder: viewer,
        status: 'terminated',
        grantedOn: '2022-01-01',
        grantExpiresOn: '2022-12-31',
        accessNotes: 'Automatically terminated',
        createdById: null,
        wasGeneratedAutomatically: false,
        applicationId: null,
      },
      // The demo researcher's grants: the drop zone's datasets, read over DRS once imported.
      ...(await Promise.all(
        DEMO_RESEARCHER.datasets.map(async (title) => ({
          datasetId: await datasetIdByTitle(app, title, m),
          holder: { kind: 'user' as const, id: await userId(DEMO_RESEARCHER.username) },
          status: 'active' as const,
          grantedOn: today,
          grantExpiresOn: null,
          accessNotes: 'Demo researcher: the demo drop zone, read over GA4GH DRS.',
          createdById: steward,
          wasGeneratedAutomatically: false,
          applicationId: null,
        })),
      )),
    ];
    // A catalog loaded before the load was marked (an older loader) has them already.
    const present = await accesses.notesOf(
      m,
      held.map((a) => a.datasetId),
    );
    const has = (a: NewHeldAccess) =>
      present.some((p) => p.dataset_id === a.datasetId && p.access_notes === a.accessNotes);
    for (const { storage, ...access } of held) {
      if (has(access)) continue;
      const id = await accesses.insertHeld(m, access);
      if (storage) await accesses.attachToDatasetStorage(m, id);
      await audit.record(m, {
        actor: DEMO_ACTOR,
        action: 'create',
        objectType: 'access',
        objectId: id,
        change: { ...access },
      });
    }
    await audit.record(m, { actor: DEMO_ACTOR, ...LOADED });
  });
}

async function datasetIdByTitle(
  app: INestApplicationContext,
  title: string,
  manager: EntityManager = app.get(DataSource).manager,
): Promise<number> {
  return required(await app.get(DatasetsRepository).idByAccessionOrTitle(manager, title), title);
}

/** The id, as text, of the partner or cohort of this name (what `publish` takes besides an accession). */
async function idByName(
  app: INestApplicationContext,
  table: 'partners' | 'cohorts',
  name: string,
): Promise<string> {
  const manager = app.get(DataSource).manager;
  const rows = await app
    .get(TrackedRecordsRepository)
    .withAccessionOrName(manager, table, ['name'], [], [name.toLowerCase()]);
  return String(required(rows[0]?.id, name));
}

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`demo data refers to unknown "${name}"`);
  return value;
}
