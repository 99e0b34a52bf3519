import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { AuditRepository } from '../audit/audit.repository';
import { AuditActor, AuditService } from '../audit/audit.service';
import { AuditSigner } from '../audit/audit-signer';
import { AuditTrailService, SignedHead } from '../audit/audit-trail.service';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { DatasetsRepository } from '../datasets/datasets.repository';
import { legalBasisIri } from '../dcat/dcat.exporter';
import {
  AuditCrateRepository,
  CrateContract,
  CrateDataset,
  CrateProject,
  CrateScope,
  CrateTrailRow,
} from './audit-crate.repository';
import { BagItZip } from './bagit-zip';
import {
  csvLine,
  datasetRef,
  duoTermEntities,
  Entity,
  OUTPUT_COLUMNS,
  outputRow,
  PEOPLE_EVENTS,
  peopleEntities,
  PROFILE,
  RO_CRATE,
  RO_CRATE_CONTEXT,
} from './crate-entities';

/**
 * Trail positions read per statement: at most this many entries (about 1 MB with their bodies)
 * in memory, whatever the trail's length.
 */
export const CRATE_WINDOW = 2000;
/** Lines of a file written per chunk. */
const LINES_PER_CHUNK = 1000;

export const CRATE_FILES = {
  metadata: 'ro-crate-metadata.json',
  head: 'trail/head.json',
  entries: 'trail/entries.jsonl',
  outputs: 'outputs/byte-ranges.csv',
} as const;

/** An export being written: its name and its bytes, produced as they are read. */
export interface AuditCrate {
  fileName: string;
  stream: Readable;
}

/** What one export reads once, before its first byte. */
interface CrateFacts {
  project: CrateProject;
  datasets: CrateDataset[];
  contracts: CrateContract[];
  duo: Map<number, string[]>;
  scope: CrateScope;
  head: SignedHead;
  exportId: string;
  requester: AuditActor;
}

/**
 * The auditor's export of one project (issue 59 item 3): a Five Safes RO-Crate 0.4 (RO-Crate
 * 1.2 in a BagIt bag, zipped). Safe project, safe data and the trail's head are read once; safe
 * people, the trail entries and safe outputs are read from the trail in windows of positions
 * up to that head while the ZIP is written, one window in memory at a time, no connection held
 * between windows. The export is itself a trail entry (read access to personal data is processing).
 */
@Injectable()
export class AuditCrateService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rows: AuditCrateRepository,
    private readonly chain: AuditRepository,
    private readonly datasetRows: DatasetsRepository,
    private readonly audit: AuditService,
    private readonly trail: AuditTrailService,
    private readonly signer: AuditSigner,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /**
   * Refuses an unknown project (404) before any byte; then the crate, written as it is read.
   * `admit` is shown the crate's file name before the export is cut and recorded: what it throws
   * refuses the export (the CLI's file already there).
   */
  async open(
    acronym: string,
    requester: AuditActor,
    admit?: (fileName: string) => void,
  ): Promise<AuditCrate> {
    const manager = this.dataSource.manager;
    const project = await this.rows.project(manager, acronym);
    if (project === undefined) throw new NotFoundError(`No project with acronym ${acronym}`);
    const stamp = new Date().toISOString().slice(0, 10);
    const bagName = `${project.acronym.replace(/[^A-Za-z0-9._-]/g, '_')}-audit-crate-${stamp}`;
    const fileName = `${bagName}.zip`;
    admit?.(fileName);
    const exportId = randomUUID();
    await this.dataSource.transaction((m) =>
      this.audit.record(m, {
        actor: requester,
        action: 'export_audit_crate',
        objectType: 'project',
        objectId: project.id,
        change: { acronym: project.acronym, export_id: exportId },
      }),
    );
    // The head after the export's own entry: everything the crate lists is at or before it.
    const head = await this.trail.signedHead();
    const datasets = await this.rows.datasets(manager, project.id);
    const contracts = await this.rows.contracts(manager, project.id);
    const duo = await this.datasetRows.duoTerms(
      manager,
      datasets.map((d) => d.id),
    );
    const scope: CrateScope = {
      projectId: project.id,
      datasetIds: datasets.map((d) => d.id),
      datasetKeys: datasets.flatMap((d) =>
        d.accession === null ? [String(d.id)] : [String(d.id), d.accession],
      ),
      contractIds: contracts.map((c) => String(c.id)),
      drsObjectIds: datasets.flatMap((d) => d.copies.map((c) => drsObjectId(c.drs_uri))),
    };
    const facts: CrateFacts = {
      project,
      datasets,
      contracts,
      duo,
      scope,
      head,
      exportId,
      requester,
    };
    const checkpoint = await this.rows.latestCheckpoint(manager);
    const jwk = this.signer.enabled ? await this.signer.jwk() : undefined;

    const bag = new BagItZip(bagName);
    bag.file(CRATE_FILES.metadata, () => this.metadata(facts));
    bag.file(CRATE_FILES.head, () => [
      `${JSON.stringify(
        {
          head: head.claims,
          jws: head.jws ?? null,
          jwk: jwk ?? null,
          pruning_checkpoint: checkpoint ?? null,
          verify:
            'Each line of trail/entries.jsonl: sha256(hex-decode(prev_hash) || UTF-8 body) = hash. ' +
            'The JWS (EdDSA or ES256, the key in jwk) signs the head the export was cut at; ' +
            '`npm run catalog -- trail verify` checks every entry between, from the pruning ' +
            'checkpoint (if any) to the head.',
        },
        null,
        2,
      )}\n`,
    ]);
    bag.file(CRATE_FILES.entries, () => this.entries(facts));
    bag.file(CRATE_FILES.outputs, () => this.outputs(facts));
    bag.finish({
      'External-Identifier': `urn:uuid:${randomUUID()}`,
      'Bagging-Date': stamp,
      'Source-Organization': this.settings.source,
      'External-Description': `Five Safes RO-Crate: the audit trail of project ${project.acronym}`,
    });
    return { fileName, stream: bag.output };
  }

  /** The trail entries of the project up to the export's head, a window of positions at a time. */
  private async *pages(facts: CrateFacts, types?: string[]): AsyncGenerator<CrateTrailRow> {
    const manager = this.dataSource.manager;
    const head = BigInt(facts.head.claims.seq);
    const first = (await this.chain.span(manager))?.first;
    let after = first === undefined ? head : BigInt(first) - 1n;
    while (after < head) {
      const upTo = after + BigInt(CRATE_WINDOW) < head ? after + BigInt(CRATE_WINDOW) : head;
      const page = await this.rows.trailPage(
        manager,
        facts.scope,
        String(after),
        String(upTo),
        types,
      );
      for (const row of page) yield row;
      after = upTo;
    }
  }

  /** ro-crate-metadata.json: the fixed entities, then safe people as the trail gives them. */
  private async *metadata(facts: CrateFacts): AsyncGenerator<string> {
    yield `{"@context":${JSON.stringify(RO_CRATE_CONTEXT)},"@graph":[\n`;
    let first = true;
    const emit = (entity: Entity) => {
      const text = `${first ? '' : ',\n'}${JSON.stringify(entity)}`;
      first = false;
      return text;
    };
    for (const entity of this.fixedEntities(facts)) yield emit(entity);
    const people = peopleEntities(facts.datasets);
    for await (const row of this.pages(facts, PEOPLE_EVENTS)) {
      yield people(row).map(emit).join('');
    }
    yield '\n]}\n';
  }

  /** Every trail entry of the project, one JSON object a line, with what verifies it. */
  private async *entries(facts: CrateFacts): AsyncGenerator<string> {
    let lines: string[] = [];
    for await (const row of this.pages(facts)) {
      lines.push(
        JSON.stringify({
          seq: Number(row.seq),
          event_id: row.event_id,
          type: `${row.object_type}.${row.action}`,
          at: row.at.toISOString(),
          actor: { kind: row.actor_kind, id: row.actor_id, name: row.actor_name },
          object: { type: row.object_type, id: row.object_id },
          change: row.change,
          prev_hash: row.prev_hash,
          hash: row.hash,
          body: row.body,
        }),
      );
      if (lines.length === LINES_PER_CHUNK) {
        yield `${lines.join('\n')}\n`;
        lines = [];
      }
    }
    if (lines.length > 0) yield `${lines.join('\n')}\n`;
  }

  /** Safe outputs: every byte range served, who, when, what. */
  private async *outputs(facts: CrateFacts): AsyncGenerator<string> {
    yield csvLine(OUTPUT_COLUMNS);
    let lines: string[] = [];
    for await (const row of this.pages(facts, ['drs_object.serve'])) {
      lines.push(csvLine(outputRow(row)));
      if (lines.length === LINES_PER_CHUNK) {
        yield lines.join('');
        lines = [];
      }
    }
    yield lines.join('');
  }

  /** Everything but safe people: descriptor, root, profile, export, project, data, files. */
  private fixedEntities(facts: CrateFacts): Entity[] {
    const { project, datasets, contracts, duo, head } = facts;
    const source = this.settings.source;
    const exportRef = { '@id': `#export-${facts.exportId}` };
    const requester = `#requester-${facts.requester.kind}`;
    const files = [CRATE_FILES.head, CRATE_FILES.entries, CRATE_FILES.outputs].map((id) => ({
      '@id': id,
    }));
    const terms = new Set<string>();
    for (const list of duo.values()) for (const iri of list) terms.add(iri);
    const entities: Entity[] = [
      {
        '@id': 'ro-crate-metadata.json',
        '@type': 'CreativeWork',
        conformsTo: { '@id': RO_CRATE },
        about: { '@id': './' },
      },
      {
        '@id': './',
        '@type': 'Dataset',
        name: `Audit trail of project ${project.acronym}`,
        description:
          `Who was granted the data of project ${project.acronym}, by whom and when, and every ` +
          `byte range they read, from the catalog's hash-chained audit trail up to entry ` +
          `${head.claims.seq}.`,
        datePublished: new Date().toISOString(),
        license: { '@id': '#terms' },
        conformsTo: { '@id': PROFILE },
        publisher: { '@id': source },
        sourceOrganization: { '@id': '#project' },
        mentions: [exportRef],
        hasPart: files,
      },
      { '@id': PROFILE, '@type': 'Profile', name: 'Five Safes RO-Crate profile', version: '0.4' },
      {
        '@id': '#terms',
        '@type': 'CreativeWork',
        name: 'Confidential audit material',
        description:
          'Personal data (identity-provider subjects, access records) handed to an auditor of ' +
          'this project: not to be published or passed on.',
      },
      {
        '@id': source,
        '@type': 'SoftwareApplication',
        name: 'catalog-api',
        url: source,
        description: 'The catalog that kept the trail and wrote this crate',
      },
      {
        '@id': exportRef['@id'],
        '@type': 'CreateAction',
        name: `Export of the audit trail of project ${project.acronym}`,
        actionStatus: { '@id': 'http://schema.org/CompletedActionStatus' },
        agent: { '@id': requester },
        instrument: { '@id': source },
        object: { '@id': '#project' },
        result: files,
        endTime: new Date().toISOString(),
        identifier: facts.exportId,
      },
      {
        '@id': requester,
        '@type': 'Person',
        name:
          facts.requester.name ??
          (facts.requester.kind === 'global'
            ? "Holder of the catalog's global API key"
            : `Catalog ${facts.requester.kind}`),
        memberOf: { '@id': '#project' },
      },
      {
        '@id': '#project',
        '@type': 'Project',
        name: project.title,
        alternateName: project.acronym,
        identifier: project.accession ?? String(project.id),
        description: project.description,
        startDate: project.start_date,
        endDate: project.end_date,
        ethicsPolicy: ethics(project),
        subjectOf: contracts.map((c) => ({ '@id': `#contract-${c.id}` })),
      },
      {
        '@id': CRATE_FILES.head,
        '@type': 'File',
        name: "The trail's head when this crate was cut, signed, and the last pruning checkpoint",
        encodingFormat: 'application/json',
      },
      {
        '@id': CRATE_FILES.entries,
        '@type': 'File',
        name: 'Every trail entry of the project, with its body and hashes',
        description:
          'One JSON object a line, in chain order: seq, event_id, type, at, actor, object, ' +
          'change, prev_hash, hash and body (the exact text hashed).',
        encodingFormat: 'application/x-ndjson',
      },
      {
        '@id': CRATE_FILES.outputs,
        '@type': 'File',
        name: 'Safe outputs: every byte range served from the DRS',
        description: `Columns: ${OUTPUT_COLUMNS.join(', ')}`,
        encodingFormat: 'text/csv',
      },
    ];
    const partners = new Map<string, Entity>();
    for (const contract of contracts) {
      entities.push({
        '@id': `#contract-${contract.id}`,
        '@type': 'CreativeWork',
        additionalType: 'Contract',
        name: contract.name ?? `Contract ${contract.id}`,
        about: { '@id': '#project' },
        description: contract.partners
          .map((p) => `${p.name} (${p.roles.join(', ') || 'no GDPR role'})`)
          .join('; '),
        contributor: contract.partners.map((p) => ({
          '@id': `#partner-${encodeURIComponent(p.name)}`,
        })),
      });
      for (const p of contract.partners) {
        const id = `#partner-${encodeURIComponent(p.name)}`;
        partners.set(id, { '@id': id, '@type': 'Organization', name: p.name });
      }
    }
    for (const partner of partners.values()) entities.push(partner);
    const bases = new Map<string, Entity>();
    for (const dataset of datasets) {
      const codes = dataset.legal_bases.flatMap((b) => b.legal_basis_codes);
      for (const code of codes) {
        bases.set(code, {
          '@id': legalBasisIri(code),
          '@type': 'DefinedTerm',
          name: `GDPR art. ${code}`,
          termCode: code,
        });
      }
      entities.push({
        '@id': datasetRef(dataset),
        '@type': 'Dataset',
        name: dataset.title,
        identifier: dataset.accession ?? String(dataset.id),
        sourceOrganization: { '@id': '#project' },
        usageInfo: (duo.get(dataset.id) ?? []).map((iri) => ({ '@id': iri })),
        hasLegalBasis: [...new Set(codes)].map((code) => ({ '@id': legalBasisIri(code) })),
        conditionsOfAccess: dataset.legal_bases
          .map((b) =>
            [
              `GDPR art. ${b.legal_basis_codes.join(', ')}`,
              b.personal_data_codes.length > 0
                ? `personal data: ${b.personal_data_codes.join(', ')}`
                : '',
              b.legal_basis_notes ?? '',
            ]
              .filter((part) => part !== '')
              .join('; '),
          )
          .join(' | '),
        distribution: dataset.copies.map((c) => ({ '@id': c.drs_uri })),
      });
      dataset.copies.forEach((copy, n) => {
        const checksum = `#manifest-sha256-${dataset.id}-${n}`;
        entities.push({
          '@id': copy.drs_uri,
          '@type': 'DataDownload',
          name: `${dataset.title} (${copy.platform})`,
          identifier: [
            drsObjectId(copy.drs_uri),
            ...(copy.manifest_sha256 ? [{ '@id': checksum }] : []),
          ],
          contentSize: copy.byte_size ?? undefined,
        });
        if (copy.manifest_sha256) {
          entities.push({
            '@id': checksum,
            '@type': 'PropertyValue',
            propertyID: 'manifest-sha256',
            name: "SHA-256 of the copy's manifest of per-file SHA-256 checksums",
            value: copy.manifest_sha256,
          });
        }
      });
    }
    for (const basis of bases.values()) entities.push(basis);
    for (const term of duoTermEntities([...terms].sort())) entities.push(term);
    return entities;
  }
}

/** The object id of a `drs://host/id` URI (what the provisioner reports as `object_id`). */
export function drsObjectId(uri: string): string {
  const path = uri.replace(/^drs:\/\/[^/]+\//, '');
  return decodeURIComponent(path);
}

function ethics(project: CrateProject): string {
  const approval = (has: boolean, notes: string | null) =>
    `${has ? 'yes' : 'no'}${notes === null ? '' : ` (${notes})`}`;
  return (
    `Institutional ethics approval: ${approval(project.has_institutional_ethics_approval, project.institutional_ethics_approval_notes)}; ` +
    `national: ${approval(project.has_national_ethics_approval, project.national_ethics_approval_notes)}`
  );
}
