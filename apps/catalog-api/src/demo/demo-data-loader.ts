import { DataSource, EntityManager } from 'typeorm';
import { hashApiKey } from '@app/auth';
import { Access } from '../accesses/access.entity';
import { Cohort } from '../cohorts/cohort.entity';
import { Contact } from '../contacts/contact.entity';
import { ContractPartnerRole } from '../contracts/contract-partner-role.entity';
import { Contract } from '../contracts/contract.entity';
import { DatabaseRepository } from '../database/database.repository';
import { DataDeclaration } from '../datasets/data-declaration.entity';
import { Dataset } from '../datasets/dataset.entity';
import { LegalBasis } from '../datasets/legal-basis.entity';
import { StorageLocation } from '../datasets/storage-location.entity';
import { Transfer } from '../datasets/transfer.entity';
import { UseCondition } from '../datasets/use-condition.entity';
import { Endpoint } from '../endpoints/endpoint.entity';
import { Exposure } from '../endpoints/exposure.entity';
import { Partner } from '../partners/partner.entity';
import { PermissionGrant } from '../visibility/permission-grant.entity';
import { Project } from '../projects/project.entity';
import { Publication } from '../projects/publication.entity';
import { Group } from '../users/group.entity';
import { User } from '../users/user.entity';
import {
  DEMO_COHORTS,
  DEMO_CONTACTS,
  DEMO_DATASETS,
  DEMO_ENDPOINTS,
  DEMO_EXPOSURES,
  DEMO_PARTNERS,
  DEMO_PROJECTS,
  DEMO_USERS,
} from './demo-catalog';
import { DEMO_CATALOG_MARKER, DemoKeys } from './demo-keys';

/** Serialises concurrent loaders (e.g. two replicas starting on an empty database). */
const DEMO_LOCK_ID = 731_104_002;

/**
 * Loads the demo catalog in one transaction unless it is already there (idempotent), its
 * users and endpoints holding `keys` (stored hashed, like every key). Returns the keys.
 */
export async function loadDemoData(
  dataSource: DataSource,
  keys: DemoKeys,
): Promise<DemoKeys & { loaded: boolean }> {
  const database = new DatabaseRepository(dataSource);
  const loaded = await dataSource.transaction(async (manager) => {
    await database.lockForTransaction(manager, DEMO_LOCK_ID);
    const present = await manager.getRepository(Partner).existsBy({ name: DEMO_CATALOG_MARKER });
    if (present) return false;
    await writeDemoCatalog(manager, keys);
    return true;
  });
  return { ...keys, loaded };
}

async function writeDemoCatalog(m: EntityManager, keys: DemoKeys): Promise<void> {
  const userKeys = new Map(keys.users.map((u) => [u.username, u.apiKey]));
  const endpointKeys = new Map(keys.endpoints.map((e) => [e.name, e.apiKey]));
  const partners = new Map<string, Partner>();
  for (const p of DEMO_PARTNERS) {
    const saved = await m.save(
      m.create(Partner, {
        name: p.name,
        acronym: p.acronym,
        countryCode: p.country,
        geoCategory: p.geo,
        sectorCategory: p.sector,
        isClinical: p.clinical,
        isPublished: p.published,
        address: p.address,
      }),
    );
    partners.set(p.acronym, saved);
    partners.set(p.name, saved);
  }
  const partner = (key: string): Partner => required(partners.get(key), key);

  const contacts = new Map<string, Contact>();
  for (const c of DEMO_CONTACTS) {
    contacts.set(
      c.key,
      await m.save(
        m.create(Contact, {
          firstName: c.first,
          lastName: c.last,
          email: c.email,
          type: c.type,
          oidcId: c.oidc ?? null,
          phone: c.phone ?? null,
          partners: c.partners.map(partner),
        }),
      ),
    );
  }
  const contact = (key: string): Contact => required(contacts.get(key), key);

  const groups = new Map<string, Group>();
  for (const name of ['data-steward', 'auditor']) {
    groups.set(name, await m.save(m.create(Group, { name })));
  }
  const users = new Map<string, User>();
  for (const u of DEMO_USERS) {
    users.set(
      u.username,
      await m.save(
        m.create(User, {
          username: u.username,
          firstName: u.first,
          lastName: u.last,
          email: `${u.username}@lcsb.example.lu`,
          oidcId: u.oidc ?? null,
          isActive: u.active,
          apiKeyHash: u.withKey ? hashApiKey(required(userKeys.get(u.username), u.username)) : null,
          affiliation: partner('LCSB'),
          groups: u.groups.map((g) => required(groups.get(g), g)),
        }),
      ),
    );
  }
  const user = (key: string): User => required(users.get(key), key);

  const cohorts = new Map<string, Cohort>();
  for (const c of DEMO_COHORTS) {
    cohorts.set(
      c.name,
      await m.save(
        m.create(Cohort, {
          name: c.name,
          description: c.description,
          url: c.url,
          isPublished: c.published,
          owners: c.owners.map(contact),
          institutes: c.institutes.map(partner),
        }),
      ),
    );
  }

  const projects = new Map<string, Project>();
  for (const p of DEMO_PROJECTS) {
    const project = await m.save(
      m.create(Project, {
        acronym: p.acronym,
        title: p.title,
        description: p.description,
        hasInstitutionalEthicsApproval: p.erp,
        institutionalEthicsApprovalNotes: p.erpNotes,
        hasNationalEthicsApproval: p.cner,
        nationalEthicsApprovalNotes: p.cnerNotes,
        startDate: p.start,
        endDate: p.end,
        metadata: p.metadata,
        localCustodians: p.custodians.map(user),
        companyPersonnel: p.personnel.map(user),
        contacts: p.contacts.map(contact),
      }),
    );
    for (const publication of p.publications) {
      await m.save(m.create(Publication, { ...publication, project }));
    }
    projects.set(p.acronym, project);
  }

  const datasets = new Map<string, Dataset>();
  const storages = new Map<string, StorageLocation>();
  for (const d of DEMO_DATASETS) {
    const dataset = await m.save(
      m.create(Dataset, {
        title: d.title,
        description: d.description,
        project: required(projects.get(d.project), d.project),
        localCustodians: d.custodians.map(user),
      }),
    );
    datasets.set(d.title, dataset);
    const declarations: DataDeclaration[] = [];
    for (const dd of d.declarations) {
      const declaration = await m.save(
        m.create(DataDeclaration, {
          dataset,
          title: dd.title,
          dataTypes: dd.dataTypes,
          accessCategory: dd.access,
          subjectsCategory: dd.subjects,
          consentStatus: dd.consent,
          hasSpecialSubjects: false,
          storageEndDate: dd.storageEnd,
          storageDurationCriteria: 'The custodian reviews retention at the storage end date.',
          cohorts: dd.cohorts.map((name) => required(cohorts.get(name), name)),
        }),
      );
      declarations.push(declaration);
      for (const c of dd.conditions) {
        await m.save(
          m.create(UseCondition, {
            dataDeclaration: declaration,
            useClass: c.useClass,
            useClassNote: c.note,
            useConditionRule: c.rule,
          }),
        );
      }
    }
    await m.save(
      m.create(LegalBasis, {
        dataset,
        legalBasisCodes: d.legalBasis.codes,
        personalDataCodes: d.legalBasis.personal,
        legalBasisNotes: d.legalBasis.notes,
        dataDeclarations: declarations,
      }),
    );
    for (const s of d.storages) {
      storages.set(d.title, await m.save(m.create(StorageLocation, { dataset, ...s })));
    }
    if (d.transfer !== undefined) {
      await m.save(
        m.create(Transfer, {
          dataset,
          partner: partner(d.transfer.partner),
          transferDetails: d.transfer.details,
          transferDate: d.transfer.date,
        }),
      );
    }
  }
  const dataset = (title: string): Dataset => required(datasets.get(title), title);

  const contract = await m.save(
    m.create(Contract, {
      name: 'Data sharing agreement with CHL',
      comments: 'Covers the PD-OMICS samples.',
      project: required(projects.get('PD-OMICS'), 'PD-OMICS'),
      localCustodians: [user('alice.white')],
    }),
  );
  await m.save(
    m.create(ContractPartnerRole, {
      contract,
      partner: partner('CHL'),
      gdprRoles: ['controller'],
      contacts: [contact('dupont')],
    }),
  );
  await m.save(
    m.create(ContractPartnerRole, {
      contract,
      partner: partner('LCSB'),
      gdprRoles: ['joint_controller', 'processor'],
      contacts: [],
    }),
  );

  const endpoints: Endpoint[] = [];
  for (const e of DEMO_ENDPOINTS) {
    endpoints.push(
      await m.save(
        m.create(Endpoint, {
          name: e.name,
          urlPattern: e.urlPattern,
          apiKeyHash: hashApiKey(required(endpointKeys.get(e.name), e.name)),
        }),
      ),
    );
  }
  for (const [title, endpoint, formId, deprecated] of DEMO_EXPOSURES) {
    await m.save(
      m.create(Exposure, {
        dataset: dataset(title),
        endpoint: endpoints[endpoint],
        formId,
        createdBy: user('sara.steward'),
        requestPdfEnabled: endpoint === 0,
        deprecatedAt: deprecated ? new Date() : null,
        deprecationReason: deprecated ? 'Superseded by a newer release.' : null,
      }),
    );
  }

  // Protected grants for the demo viewer: one dataset directly, one project through the grant.
  const viewer = user('victor.viewer');
  await m.save(
    m.create(PermissionGrant, {
      user: viewer,
      objectType: 'dataset',
      objectId: dataset('EPIC-DREM sequencing data').id,
    }),
  );
  await m.save(
    m.create(PermissionGrant, {
      user: viewer,
      objectType: 'project',
      objectId: required(projects.get('IRON-DEF'), 'IRON-DEF').id,
    }),
  );

  const today = new Date().toISOString().slice(0, 10);
  await m.save([
    m.create(Access, {
      dataset: dataset('PD-OMICS plasma metabolomics'),
      user: viewer,
      status: 'active',
      grantedOn: today,
      grantExpiresOn: null,
      accessNotes: 'Analysis for the PD-OMICS consortium.',
      createdBy: user('sara.steward'),
      storageLocations: [required(storages.get('PD-OMICS plasma metabolomics'), 'storage')],
    }),
    m.create(Access, {
      dataset: dataset('EPIC-DREM sequencing data'),
      contact: contact('jensen'),
      status: 'active',
      grantedOn: today,
      grantExpiresOn: '2099-12-31',
      wasGeneratedAutomatically: true,
      applicationId: 4056,
      accessNotes: 'Set automatically by REMS data access request #4056',
    }),
    m.create(Access, {
      dataset: dataset('PD-OMICS blood transcriptomics'),
      user: viewer,
      status: 'terminated',
      grantedOn: '2022-01-01',
      grantExpiresOn: '2022-12-31',
      accessNotes: 'Automatically terminated',
    }),
  ]);
}

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`demo data refers to unknown "${name}"`);
  return value;
}
