import { duoIri } from '../datasets/use-condition-codes';
import type { DatasetFacts } from './dcat.repository';
import { iri, plainBase, RdfNode, terms } from './rdf-graph';

/** The terms the mapping names, built once (see `terms`). */
const adms = terms('adms', 'identifier', 'Identifier');
const cv = terms('cv', 'contactPoint', 'ContactPoint', 'email');
const dcat = terms(
  'dcat',
  'Catalog',
  'themeTaxonomy',
  'dataset',
  'Dataset',
  'contactPoint',
  'keyword',
  'theme',
  'Distribution',
  'accessURL',
  'distribution',
  'byteSize',
  'accessService',
  'servesDataset',
  'DataService',
  'endpointURL',
);
const dcatap = terms('dcatap', 'applicableLegislation');
const dct = terms(
  'dct',
  'title',
  'description',
  'publisher',
  'type',
  'identifier',
  'issued',
  'modified',
  'accessRights',
  'RightsStatement',
  'provenance',
  'ProvenanceStatement',
);
const dpv = terms(
  'dpv',
  'PseudonymisedData',
  'AnonymisedData',
  'hasLegalBasis',
  'LegalBasis',
  'hasPersonalData',
  'PersonalData',
);
const eli = terms('eli', 'LegalResource');
const foaf = terms('foaf', 'Agent', 'name');
const healthdcatap = terms(
  'healthdcatap',
  'hdab',
  'hasStructuredData',
  'healthCategory',
  'populationCoverage',
);
const hydra = terms(
  'hydra',
  'Collection',
  'totalItems',
  'view',
  'PartialCollectionView',
  'first',
  'last',
  'next',
  'previous',
);
const odrl = terms('odrl', 'Policy', 'Set', 'target', 'hasPolicy', 'action', 'use');
const owl = terms('owl', 'deprecated');
const prov = terms('prov', 'wasGeneratedBy', 'Activity');
const rdfs = terms('rdfs', 'label', 'comment');
const skos = terms(
  'skos',
  'Concept',
  'prefLabel',
  'inScheme',
  'notation',
  'altLabel',
  'ConceptScheme',
);
const spdx = terms(
  'spdx',
  'Checksum',
  'algorithm',
  'checksumValue',
  'checksum',
  'ChecksumAlgorithm',
  'checksumAlgorithm_sha256',
);
const vcard = terms('vcard', 'Kind', 'fn', 'hasEmail');
const xsd = terms('xsd', 'nonNegativeInteger', 'dateTime', 'boolean', 'date', 'hexBinary');

/**
 * The catalog's model onto DCAT-AP 3.0.1 and HealthDCAT-AP (docs/dcat.md is the table, one line
 * per property and its source). Nothing is written that the catalog does not hold: a property
 * without a source is left out, never filled with a guess.
 */

/** What the settings say about the catalog (CatalogSettings.DCAT_*, CATALOG_SOURCE). */
export interface DcatConfig {
  /** The public base URL: every IRI is under it. */
  base: string;
  publisherName: string;
  publisherUri?: string;
  publisherType?: string;
  contactEmail?: string;
  hdab?: { name: string; uri?: string; email: string };
  applicableLegislation: string[];
}

const EU = 'http://publications.europa.eu/resource/authority/';
const HDEU = 'https://hdeu-dcat.data.health.europa.eu/resource/authority';
const HEALTH_CATEGORIES = `${HDEU}/healthcategories`;
const PUBLISHER_TYPES = `${HDEU}/publisher-type`;

export const ACCESS_RIGHTS = {
  open_access: 'PUBLIC',
  registered_access: 'RESTRICTED',
  controlled_access: 'NON_PUBLIC',
} as const;

/** Most restrictive last: a dataset gets the most restrictive access of its declarations. */
const ACCESS_ORDER = ['PUBLIC', 'RESTRICTED', 'NON_PUBLIC'] as const;
export type AccessLevel = (typeof ACCESS_ORDER)[number];
/** The EU access-right authority's IRI of each level. */
const ACCESS_RIGHT_IRIS: Record<AccessLevel, string> = {
  PUBLIC: `${EU}access-right/PUBLIC`,
  RESTRICTED: `${EU}access-right/RESTRICTED`,
  NON_PUBLIC: `${EU}access-right/NON_PUBLIC`,
};
const HEALTH_THEME = `${EU}data-theme/HEAL`;

/** HealthDCAT-AP health categories (EHDS art. 51) a data-type name falls in, by its wording. */
const HEALTH_CATEGORY_RULES: [RegExp, string, string][] = [
  [
    /genom|genot|exom|sequenc|seq|chip|atac|methyl|epigen|omics|transcript|proteom|metabolom|snp|gwas/i,
    'HGPD',
    'Human genetic, epigenomic and genomic data',
  ],
  [/sample|biobank|specimen|tissue/i, 'EINS', 'Health data from biobanks'],
  [
    /clinical|questionnaire|survey|lifestyle|phenotyp|cohort/i,
    'RQSH',
    'Data from research cohorts, questionnaires and surveys',
  ],
];

/** GDPR art. 6.1 bases as DPV's GDPR extension terms. */
const LEGAL_BASES: Record<string, string> = {
  '6.1(a)': 'A6-1-a',
  '6.1(b)': 'A6-1-b',
  '6.1(c)': 'A6-1-c',
  '6.1(d)': 'A6-1-d',
  '6.1(e)': 'A6-1-e',
  '6.1(f)': 'A6-1-f',
};
const DPV_GDPR = 'https://w3id.org/dpv/legal/eu/gdpr#';

/** A GDPR art. 6.1 code (`6.1(a)`) as its DPV term's IRI (DCAT's and the audit crate's). */
export const legalBasisIri = (code: string): string => `${DPV_GDPR}${LEGAL_BASES[code]}`;
const DPV_PD = 'https://w3id.org/dpv/dpv-pd#';

/**
 * The catalog's personal-data codes as DPV-PD categories (the namespace HealthDCAT-AP requires).
 * Standard, Special and Other name no category: they are left out.
 */
const PERSONAL_DATA: Record<string, string | undefined> = {
  Race: `${DPV_PD}Race`,
  Genetic: `${DPV_PD}Genetic`,
  Biometric: `${DPV_PD}Biometric`,
  Health: `${DPV_PD}Health`,
  'Sexual orientation': `${DPV_PD}SexualOrientation`,
  Convictions: `${DPV_PD}CriminalConviction`,
};

const DE_IDENTIFICATION: Record<string, [string, string]> = {
  pseudonymization: [dpv.PseudonymisedData, 'Pseudonymised data'],
  anonymization: [dpv.AnonymisedData, 'Anonymised data'],
};

const RULES: Record<string, [string, string]> = {
  PERMISSION: ['permission', 'Permission'],
  CONSTRAINED_PERMISSION: ['permission', 'Permission'],
  PROHIBITION: ['prohibition', 'Prohibition'],
  OBLIGATION: ['obligation', 'Duty'],
};

const seg = (value: string | number) => encodeURIComponent(String(value));

/** IRIs of the catalog's resources, all under the public base URL. */
export class DcatIris {
  /**
   * Whether these IRIs may be written without being looked at (IriTerm.own): the base is plain
   * (`plainBase`) and every part after it is the code's text, a number or percent-encoded.
   */
  readonly own: boolean;

  constructor(protected readonly base: string) {
    this.own = plainBase(base);
  }

  catalog = () => `${this.base}/api/dcat`;
  page = (n: number) => `${this.base}/api/dcat?page=${n}`;
  context = () => `${this.base}/api/dcat/context.jsonld`;
  dataset = (accession: string) => `${this.base}/api/dcat/datasets/${seg(accession)}`;
  project = (acronym: string) => `${this.base}/api/dcat/projects/${seg(acronym)}`;
  person = (id: number) => `${this.base}/api/dcat/people/${id}`;
  publisher = () => `${this.base}/api/dcat/publisher`;
  hdab = () => `${this.base}/api/dcat/hdab`;
  /** A distribution of the dataset at `dataset` (`key`: `storage-<id>` or `access-request`). */
  distribution = (dataset: string, _accession: string, key: string) => `${dataset}#${key}`;
  /** The checksum of the distribution at `distribution`. */
  checksum = (distribution: string) => `${distribution}-checksum`;
}

/** The access level of a dataset: the most restrictive of its declarations; null when none says. */
export function accessLevel(facts: DatasetFacts): AccessLevel | null {
  let level = -1;
  for (const d of facts.declarations) {
    if (d.access_category !== null)
      level = Math.max(level, ACCESS_ORDER.indexOf(ACCESS_RIGHTS[d.access_category]));
  }
  return level < 0 ? null : ACCESS_ORDER[level];
}

export class DcatExporter {
  readonly iris: DcatIris;
  /**
   * Nodes that are the same in every graph of this configuration (frozen: see RdfNode.freeze),
   * built on first use: the mapping writes them into every dataset or record.
   */
  private laws?: RdfNode[];
  private agents?: RdfNode[];
  private contact?: RdfNode;

  /** `iris`: where the records live (the FAIR Data Point names them under /fdp). */
  constructor(
    readonly config: DcatConfig,
    iris?: DcatIris,
  ) {
    this.iris = iris ?? new DcatIris(config.base);
  }

  /** The catalog itself, its publisher and the shared nodes (written once, on the first page). */
  catalogNodes(datasetIris: string[], page: PageInfo): RdfNode[] {
    const { config, iris } = this;
    const catalog = new RdfNode(iris.catalog(), [dcat.Catalog, hydra.Collection])
      .lit(dct.title, `${config.publisherName} research data catalog`)
      .lit(
        dct.description,
        `Datasets held by ${config.publisherName}, with their access conditions.`,
      )
      .ref(dct.publisher, this.publisherIri())
      .ref(dcat.themeTaxonomy, `${EU}data-theme`)
      .lit(hydra.totalItems, page.total, xsd.nonNegativeInteger)
      .ref(hydra.view, iris.page(page.number));
    for (const law of config.applicableLegislation) catalog.ref(dcatap.applicableLegislation, law);
    for (const dataset of datasetIris) catalog.ref(dcat.dataset, dataset);
    const nodes = [catalog, this.pageNode(page), ...this.agentNodes(), ...this.legislation()];
    return merge(nodes);
  }

  /** The applicable legislation: ELI legal resources (shared, built once). */
  legislation(): RdfNode[] {
    return (this.laws ??= this.config.applicableLegislation.map((law) =>
      new RdfNode(law, [eli.LegalResource]).freeze(),
    ));
  }

  /** The catalog with only the datasets of a page (the pages after the first). */
  catalogMembers(datasetIris: string[], page: PageInfo): RdfNode[] {
    const catalog = new RdfNode(this.iris.catalog());
    for (const dataset of datasetIris) catalog.ref(dcat.dataset, dataset);
    return [catalog, this.pageNode(page)];
  }

  private pageNode(page: PageInfo): RdfNode {
    const { iris } = this;
    const node = new RdfNode(iris.page(page.number), [hydra.PartialCollectionView])
      .ref(hydra.first, iris.page(1))
      .ref(hydra.last, iris.page(page.last));
    if (page.number < page.last) node.ref(hydra.next, iris.page(page.number + 1));
    if (page.number > 1) node.ref(hydra.previous, iris.page(page.number - 1));
    return node;
  }

  publisherIri = () => this.config.publisherUri ?? this.iris.publisher();

  /**
   * The publisher and the HDAB, each with one cv:ContactPoint (HealthDCAT-AP's Health Agent).
   * Shared, built once.
   */
  agentNodes(): RdfNode[] {
    return (this.agents ??= this.agentNodesOnce().map((node) => node.freeze()));
  }

  private agentNodesOnce(): RdfNode[] {
    const { config, iris } = this;
    const nodes: RdfNode[] = [];
    const publisher = new RdfNode(this.publisherIri(), [foaf.Agent])
      .lit(foaf.name, config.publisherName)
      .ref(dct.type, config.publisherType);
    if (config.publisherType !== undefined) {
      // Its label is the code the IRI ends with (the scheme is not loaded here).
      const code = decodeURIComponent(
        config.publisherType.replace(/\/+$/, '').replace(/^.*[/#]/, ''),
      );
      const type = new RdfNode(config.publisherType, [skos.Concept]).lit(
        skos.prefLabel,
        code.replace(/[-_]/g, ' '),
      );
      // A HealthDCAT-AP publisher type belongs to its scheme (the validator checks skos:inScheme).
      if (config.publisherType.startsWith(`${PUBLISHER_TYPES}/`))
        type.ref(skos.inScheme, PUBLISHER_TYPES);
      nodes.push(type);
    }
    if (config.contactEmail !== undefined) {
      const contact = `${iris.publisher()}#contact`;
      publisher.ref(cv.contactPoint, contact);
      nodes.push(new RdfNode(contact, [cv.ContactPoint]).lit(cv.email, config.contactEmail));
      nodes.push(this.catalogContact());
    }
    nodes.push(publisher);
    if (config.hdab !== undefined) {
      const hdab = config.hdab.uri ?? iris.hdab();
      const contact = `${iris.hdab()}#contact`;
      nodes.push(
        new RdfNode(hdab, [foaf.Agent])
          .lit(foaf.name, config.hdab.name)
          .ref(cv.contactPoint, contact),
        new RdfNode(contact, [cv.ContactPoint]).lit(cv.email, config.hdab.email),
      );
    }
    return nodes;
  }

  /** The vcard of the publisher's contact address: the contact of datasets without a custodian. */
  private catalogContact(): RdfNode {
    return (this.contact ??= new RdfNode(`${this.iris.catalog()}#contact`, [vcard.Kind])
      .lit(vcard.fn, this.config.publisherName)
      .ref(vcard.hasEmail, `mailto:${this.config.contactEmail}`)
      .freeze());
  }

  /** One dataset and the nodes only it refers to. */
  datasetNodes(facts: DatasetFacts): RdfNode[] {
    const { config, iris } = this;
    const id = iris.dataset(facts.accession);
    const { own } = iris;
    const level = accessLevel(facts);
    const ds = new RdfNode(id, [dcat.Dataset], own)
      .lit(dct.title, facts.title)
      // DCAT-AP requires a description; the title is the only text a dataset without one has.
      .lit(dct.description, facts.description ?? facts.title)
      .lit(dct.identifier, facts.accession)
      .lit(dct.identifier, `urn:uuid:${facts.elu_uuid}`)
      .ref(dct.publisher, this.publisherIri())
      .lit(dct.issued, facts.issued, xsd.dateTime)
      .lit(dct.modified, facts.modified, xsd.dateTime);
    const nodes: RdfNode[] = [ds];
    if (facts.deprecated_at !== null) {
      // DAISY's `deprecated` for this endpoint (core/importer/datasets_exporter.py).
      ds.lit(owl.deprecated, true, xsd.boolean);
    }
    if (facts.other_external_id !== null) {
      const other = `${id}#other-identifier`;
      ds.ref(adms.identifier, other, own);
      nodes.push(
        new RdfNode(other, [adms.Identifier], own).lit(skos.notation, facts.other_external_id),
      );
    }
    if (facts.project !== null) {
      const project = iris.project(facts.project.acronym);
      ds.ref(prov.wasGeneratedBy, project, own);
      nodes.push(
        new RdfNode(project, [prov.Activity], own)
          .lit(dct.title, facts.project.title)
          .lit(dct.identifier, facts.project.accession)
          .lit(skos.altLabel, facts.project.acronym),
      );
    }
    pushAll(nodes, this.contacts(ds, facts));
    if (level !== null) {
      const right = ACCESS_RIGHT_IRIS[level];
      ds.ref(dct.accessRights, right);
      nodes.push(rightsStatement(right));
    }
    // HealthDCAT-AP asks the same of a dataset at every access level (its public, restricted
    // and non-public shapes): the legislation, the health data access body, whether variables
    // are described. A dataset whose access no declaration states is at no level.
    const declared = level !== null;
    if (declared) {
      for (const law of config.applicableLegislation) ds.ref(dcatap.applicableLegislation, law);
      pushAll(nodes, this.legislation());
      if (config.hdab !== undefined) ds.ref(healthdcatap.hdab, config.hdab.uri ?? iris.hdab());
      // The catalog publishes no variable-level description (csvw), so none is claimed.
      ds.lit(healthdcatap.hasStructuredData, false, xsd.boolean);
    }
    pushAll(nodes, this.subjects(ds, facts));
    pushAll(nodes, this.conditions(ds, id, facts));
    pushAll(nodes, this.distributions(ds, id, facts, level));
    return merge(nodes);
  }

  private contacts(ds: RdfNode, facts: DatasetFacts): RdfNode[] {
    if (facts.custodians.length === 0) {
      if (this.config.contactEmail === undefined) return [];
      const contact = this.catalogContact();
      ds.ref(dcat.contactPoint, contact.id, this.iris.own);
      return [contact];
    }
    const { own } = this.iris;
    return facts.custodians.map((c) => {
      const contact = new RdfNode(this.iris.person(c.id), [vcard.Kind], own)
        .lit(vcard.fn, `${c.first_name} ${c.last_name}`.trim() || c.email)
        .ref(vcard.hasEmail, `mailto:${encodeURI(c.email)}`);
      ds.ref(dcat.contactPoint, contact.id, own);
      return contact;
    });
  }

  /** Data types (keywords, health categories, themes), de-identification, cohorts, provenance. */
  private subjects(ds: RdfNode, facts: DatasetFacts): RdfNode[] {
    const nodes: RdfNode[] = [];
    const partners = new Set<string>();
    for (const d of facts.declarations) {
      for (const type of d.data_types) {
        ds.lit(dcat.keyword, type.replace(/_/g, ' '));
        for (let i = 0; i < HEALTH_CATEGORY_RULES.length; i++) {
          const [pattern, code, label] = HEALTH_CATEGORY_RULES[i];
          if (!pattern.test(type)) continue;
          const category = healthCategory(code, label);
          ds.ref(healthdcatap.healthCategory, category.id);
          ds.ref(dcat.theme, HEALTH_THEME);
          nodes.push(category, HEALTH_CATEGORY_SCHEME);
        }
      }
      const [type, label] = DE_IDENTIFICATION[d.de_identification];
      ds.ref(dct.type, type);
      nodes.push(concept(type, label));
      for (const cohort of d.cohorts)
        ds.lit(healthdcatap.populationCoverage, `Cohort: ${cohort.name}`);
      if (d.partner !== null) partners.add(d.partner);
    }
    if (partners.size > 0 || facts.imports.length > 0 || facts.project !== null) {
      const statement = `${ds.id}#provenance`;
      const { own } = this.iris;
      const parts = [];
      if (facts.project !== null)
        parts.push(
          `Generated within the project ${facts.project.title} (${facts.project.acronym}).`,
        );
      if (partners.size > 0) parts.push(`Data from ${[...partners].sort().join(', ')}.`);
      if (facts.imports.length > 0)
        parts.push(`Imported into storage on ${[...new Set(facts.imports)].join(', ')}.`);
      ds.ref(dct.provenance, statement, own);
      nodes.push(
        new RdfNode(statement, [dct.ProvenanceStatement], own).lit(rdfs.label, parts.join(' ')),
      );
    }
    return nodes;
  }

  /** Legal bases and personal data (DPV), use conditions (an ODRL policy of DUO terms). */
  private conditions(ds: RdfNode, id: string, facts: DatasetFacts): RdfNode[] {
    const nodes: RdfNode[] = [];
    for (const basis of facts.legal_bases) {
      for (const code of basis.legal_basis_codes) {
        const term = legalBasisIri(code);
        ds.ref(dpv.hasLegalBasis, term);
        nodes.push(legalBasis(code));
      }
      for (const code of basis.personal_data_codes) {
        const term = PERSONAL_DATA[code];
        if (term === undefined) continue;
        ds.ref(dpv.hasPersonalData, term);
        nodes.push(personalData(term));
      }
    }
    const rules = facts.declarations.flatMap((d) => d.use_conditions);
    if (rules.length > 0) {
      const { own } = this.iris;
      const policy = new RdfNode(`${id}#use-conditions`, [odrl.Policy, odrl.Set], own).ref(
        odrl.target,
        id,
        own,
      );
      ds.ref(odrl.hasPolicy, policy.id, own);
      nodes.push(policy);
      for (const rule of rules) {
        const [property, type] = RULES[rule.use_condition_rule];
        const node = new RdfNode(`${id}#use-condition-${rule.id}`, [iri('odrl', type)], own)
          .ref(odrl.action, odrl.use)
          .lit(skos.notation, rule.use_class)
          .lit(rdfs.comment, rule.use_class_note)
          .lit(rdfs.comment, rule.use_condition_note);
        const duo = duoIri(rule.use_class);
        if (duo !== null) node.ref(dct.type, duo);
        policy.ref(iri('odrl', property), node.id, own);
        nodes.push(node);
      }
    }
    return nodes;
  }

  /**
   * What a distribution of a dataset at `level` says of access: the dataset's access right (so a
   * harvester reading the distribution alone, as an FDP crawler does, knows a NON_PUBLIC copy is
   * not downloadable) and the legislation it falls under.
   */
  private accessTerms(node: RdfNode, level: AccessLevel) {
    node.ref(dct.accessRights, ACCESS_RIGHT_IRIS[level]);
    for (const law of this.config.applicableLegislation)
      node.ref(dcatap.applicableLegislation, law);
  }

  /**
   * Each storage copy is a distribution, reached through the dataset's page (access by request),
   * with the size and checksum the provisioner registered for it, if any. A copy is many files:
   * its checksum is the SHA-256 of its manifest (the SHA-256 of every file), and says so.
   */
  private distributions(
    ds: RdfNode,
    id: string,
    facts: DatasetFacts,
    level: AccessLevel | null,
  ): RdfNode[] {
    const nodes: RdfNode[] = [];
    const { own } = this.iris;
    if (facts.storages.length === 0 && level !== null) {
      // HealthDCAT-AP wants a distribution on every dataset: without a registered copy, it is
      // how access is had (the dataset's page: a request to the access committee, or the
      // catalog's registration for registered access; the page itself for open access).
      const [title, note] = ACCESS_WITHOUT_COPY[level];
      const node = new RdfNode(
        this.iris.distribution(id, facts.accession, 'access-request'),
        [dcat.Distribution],
        own,
      )
        .lit(dct.title, title)
        .ref(dcat.accessURL, id, own)
        .lit(dct.description, note);
      this.accessTerms(node, level);
      ds.ref(dcat.distribution, node.id, own);
      nodes.push(node);
    }
    for (const storage of facts.storages) {
      const node = new RdfNode(
        this.iris.distribution(id, facts.accession, `storage-${storage.id}`),
        [dcat.Distribution],
        own,
      )
        .lit(dct.title, storage.platform)
        // A DRS URI is the database's text: looked at when written.
        .ref(dcat.accessURL, storage.drs_uri ?? id, own && storage.drs_uri === null)
        .lit(dct.issued, facts.imports[0], xsd.date)
        .lit(dct.modified, facts.imports[facts.imports.length - 1], xsd.date)
        .lit(dcat.byteSize, storage.byte_size, xsd.nonNegativeInteger);
      if (level !== null) this.accessTerms(node, level);
      ds.ref(dcat.distribution, node.id, own);
      nodes.push(node);
      const service = drsService(storage.drs_uri);
      if (service !== undefined) {
        // The GA4GH DRS server that serves the copy: HealthDCAT-AP's access service.
        node.ref(dcat.accessService, service.id);
        nodes.push(service.ref(dcat.servesDataset, id, own));
      }
      if (storage.manifest_sha256 !== null) {
        const checksum = new RdfNode(this.iris.checksum(node.id), [spdx.Checksum], own)
          .ref(spdx.algorithm, SHA256)
          // xsd:hexBinary as DCAT-AP's shape requires; the catalog stores it lowercase.
          .lit(spdx.checksumValue, storage.manifest_sha256, xsd.hexBinary)
          .lit(rdfs.comment, MANIFEST_CHECKSUM);
        node.ref(spdx.checksum, checksum.id, own).lit(dct.description, MANIFEST_NOTE);
        nodes.push(checksum, SHA256_NODE);
      }
    }
    return nodes;
  }
}

/**
 * The GA4GH DRS service a `drs://<host>/<id>` URI names: the DRS 1.x API at
 * `https://<host>/ga4gh/drs/v1/` (the spec's hostname-based URI resolution).
 */
function drsService(drsUri: string | null): RdfNode | undefined {
  const host = drsUri === null ? null : /^drs:\/\/([^/]+)\//.exec(drsUri)?.[1];
  if (host === null || host === undefined) return undefined;
  const endpoint = `https://${host}/ga4gh/drs/v1/`;
  return new RdfNode(endpoint, [dcat.DataService])
    .lit(dct.title, `GA4GH Data Repository Service at ${host}`)
    .ref(dcat.endpointURL, endpoint)
    .lit(
      dct.description,
      'GA4GH DRS 1.x: resolves the drs:// URI of the copy to its files once access is granted.',
    );
}

/** SPDX's SHA-256 (the range shape wants it typed spdx:ChecksumAlgorithm in the graph). */
const SHA256 = spdx.checksumAlgorithm_sha256;
const SHA256_NODE = new RdfNode(SHA256, [spdx.ChecksumAlgorithm]).freeze();

/**
 * `build` memoised: nodes of vocabulary terms, the same in every dataset's graph, built once and
 * frozen. Keys come from the code's tables (a few dozen at most); past LIMIT a node is built
 * anew each time, so a key from data cannot make it grow.
 */
function shared<K>(build: (key: K) => RdfNode): (key: K) => RdfNode {
  const LIMIT = 256;
  const made = new Map<K, RdfNode>();
  return (key) => {
    let node = made.get(key);
    if (node === undefined) {
      node = build(key).freeze();
      if (made.size < LIMIT) made.set(key, node);
    }
    return node;
  };
}

const rightsStatement = shared((right: string) => new RdfNode(right, [dct.RightsStatement]));
const HEALTH_CATEGORY_SCHEME = new RdfNode(HEALTH_CATEGORIES, [skos.ConceptScheme])
  .lit(dct.title, 'HealthDCAT-AP health categories')
  .freeze();
const healthCategory = (code: string, label: string) =>
  concept(`${HEALTH_CATEGORIES}/${code}`, label, HEALTH_CATEGORIES);
/** A skos:Concept and its label (in `scheme` when given), keyed by its IRI. */
const concepts = new Map<string, RdfNode>();
function concept(term: string, label: string, scheme?: string): RdfNode {
  let node = concepts.get(term);
  if (node === undefined) {
    // The label and scheme are the code's, one per term (its tables).
    node = new RdfNode(term, [skos.Concept]).lit(skos.prefLabel, label).ref(skos.inScheme, scheme);
    concepts.set(term, node.freeze());
  }
  return node;
}
const legalBasis = shared((code: string) =>
  new RdfNode(legalBasisIri(code), [dpv.LegalBasis]).lit(skos.notation, `GDPR art. ${code}`),
);
const personalData = shared((term: string) => new RdfNode(term, [dpv.PersonalData]));
const MANIFEST_CHECKSUM =
  "SHA-256 of the copy's manifest (.provisioner/manifest-sha256.txt), which lists the SHA-256 " +
  'of every file of the copy: a copy of several files has no single-file checksum.';
const ACCESS_REQUEST_NOTE =
  'The data are not public: access is requested from the data access committee (through the ' +
  "catalog's access request process); a granted request is a GA4GH visa for this dataset.";
/** The distribution of a dataset without a registered copy, by access level: title, description. */
const ACCESS_WITHOUT_COPY: Record<AccessLevel, [string, string]> = {
  NON_PUBLIC: ['Access by request', ACCESS_REQUEST_NOTE],
  RESTRICTED: [
    'Access after registration',
    'The data are available to registered users: access is requested through the ' +
      "catalog's access request process, which registers the requester.",
  ],
  PUBLIC: [
    'Access through the catalog',
    "The data are open: how to obtain them is described on the dataset's page.",
  ],
};
const MANIFEST_NOTE =
  'A storage copy of the dataset (many files). Its spdx:checksum is the SHA-256 of the ' +
  "copy's manifest of per-file SHA-256 checksums (.provisioner/manifest-sha256.txt), not of " +
  'a single file; dcat:byteSize is the total of its files.';

export interface PageInfo {
  number: number;
  last: number;
  total: number;
}

/**
 * `more` appended to `nodes` (an indexed loop: a `for…of` here, in code the compiler does not
 * optimise early, makes an iterator and a result object per node).
 */
function pushAll(nodes: RdfNode[], more: RdfNode[]): void {
  for (let i = 0; i < more.length; i++) nodes.push(more[i]);
}

/** Up to this many nodes, `merge` compares ids pairwise instead of keying a map by them. */
const FEW_NODES = 32;

/** Nodes with the same IRI as one node (statements of all, in order), so each subject is written once. */
export function merge(nodes: RdfNode[]): RdfNode[] {
  if (nodes.length > FEW_NODES) return mergeMany(nodes);
  // A dataset's dozen or so nodes: a map of their ids (hashed, grown, then copied out) costs
  // more than comparing them pairwise.
  const out: RdfNode[] = [];
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    let at = -1;
    for (let j = 0; j < out.length && at < 0; j++) {
      const seen = out[j];
      if (seen === node || seen.id === node.id) at = j;
    }
    if (at < 0) out.push(node);
    else if (out[at] !== node) {
      if (out[at].frozen) out[at] = out[at].copy();
      addStatements(out[at], node);
    }
  }
  return out;
}

function mergeMany(nodes: RdfNode[]): RdfNode[] {
  const byId = new Map<string, RdfNode>();
  for (const node of nodes) {
    let seen = byId.get(node.id);
    if (seen === undefined) byId.set(node.id, node);
    // A shared node met again adds nothing; a shared node is added to as a copy.
    else if (seen !== node) {
      if (seen.frozen) byId.set(node.id, (seen = seen.copy()));
      addStatements(seen, node);
    }
  }
  return Array.from(byId.values());
}

/** The statements of `from` added to `to`. */
function addStatements(to: RdfNode, from: RdfNode): void {
  for (const [predicate, objects] of from.statements)
    for (const o of objects)
      if ('iri' in o) to.ref(predicate, o.iri, o.own === true);
      else to.lit(predicate, o.value, o.datatype);
}
