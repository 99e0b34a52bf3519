import { DcatExporter, DcatIris, merge, type PageInfo } from '../dcat/dcat.exporter';
import type { DatasetFacts } from '../dcat/dcat.repository';
import { isIri, RdfNode, terms } from '../dcat/rdf-graph';
import { profileNode, type ProfileKind } from './fdp-profiles';

/** The terms the mapping names, built once (see `terms`). */
const dcat = terms(
  'dcat',
  'Resource',
  'version',
  'CatalogRecord',
  'DataService',
  'endpointURL',
  'dataset',
  'distribution',
  'theme',
  'Distribution',
  'contactPoint',
);
const dct = terms(
  'dct',
  'isPartOf',
  'publisher',
  'issued',
  'modified',
  'conformsTo',
  'title',
  'description',
);
const ejp = terms('ejp', 'VPDiscoverable', 'vpConnection');
const fdp = terms(
  'fdp',
  'FAIRDataPoint',
  'MetadataService',
  'conformsToFdpSpec',
  'metadataIdentifier',
  'metadataIssued',
  'metadataModified',
  'metadataCatalog',
);
const foaf = terms('foaf', 'primaryTopic');
const ldp = terms('ldp', 'DirectContainer', 'membershipResource', 'hasMemberRelation', 'contains');
const r3d = terms('r3d', 'Repository');
const rdf = terms('rdf', 'type');
const spdx = terms('spdx', 'algorithm');
const vcard = terms('vcard', 'Kind', 'Group', 'fn', 'hasMember', 'hasEmail');
const xsd = terms('xsd', 'dateTime', 'date');

/**
 * The FAIR Data Point's records (FDP 1.2 / "FDP Core"): the same DCAT-AP mapping as /api/dcat
 * (dcat.exporter.ts), laid out as the FDP lays out its metadata: one record per resource, read at
 * the resource's own IRI, each a dcat:Resource with a dcat:CatalogRecord, its profile and an LDP
 * DirectContainer of its children (FAIRDataTeam/FAIRDataPoint, MetadataEnhancer.java:
 * `enhanceWithLinks`, `enhanceWithResourceDefinition`).
 */

/** Where the FDP's records live: the root, one catalog, a record per dataset and distribution. */
export class FdpIris extends DcatIris {
  root = () => `${this.base}/fdp`;
  override catalog = () => `${this.base}/fdp/catalog`;
  override page = (n: number) => `${this.base}/fdp/catalog?page=${n}`;
  override dataset = (accession: string) =>
    `${this.base}/fdp/dataset/${encodeURIComponent(accession)}`;
  // The exporter names a dataset's distributions and their checksums as records of their own.
  override distribution = (_dataset: string, accession: string, key: string) =>
    `${this.base}/fdp/distribution/${encodeURIComponent(accession)}/${encodeURIComponent(key)}`;
  override checksum = (distribution: string) => `${distribution}#checksum`;
}

/** The FDP specification the root says it follows. */
export const FDP_SPEC = 'https://specs.fairdatapoint.org/fdp-specs-v1.2.html';
const EU_THEME = 'http://publications.europa.eu/resource/authority/data-theme/';
const VP_DISCOVERABLE = ejp.VPDiscoverable;

export interface RecordTimes {
  issued: string | null;
  /** Never null: a record is always modified at some time (DCAT-AP's CatalogRecord needs it). */
  modified: string;
}

/** A record: its nodes and what the HTTP answer says about it. */
export interface FdpRecord {
  kind: ProfileKind;
  nodes: RdfNode[];
  modified: string;
}

export class FdpRecords {
  /** The profiles' nodes, shared by every record of their kind. */
  private readonly profiles = new Map<ProfileKind, RdfNode>();

  constructor(
    private readonly exporter: DcatExporter,
    private readonly iris: FdpIris,
    private readonly base: string,
    private readonly vpDiscoverable: boolean,
  ) {}

  /**
   * What every record's resource carries: dcat:Resource, publisher, version. Its profile is on
   * its CatalogRecord (DCAT-AP: the profile the record's metadata conforms to; a dataset's own
   * dct:conformsTo is a standard its data follow, from HealthDCAT-AP's vocabulary).
   */
  private resource(node: RdfNode, times: RecordTimes, parent?: string) {
    node.ref(rdf.type, dcat.Resource).ref(dct.isPartOf, parent);
    if (!node.statements.has(dct.publisher)) node.ref(dct.publisher, this.exporter.publisherIri());
    // A version that changes when the metadata does: the time it last changed.
    node.lit(dcat.version, times.modified);
    return node;
  }

  /** The dcat:CatalogRecord of the record at `topic`. */
  private record(topic: string, kind: ProfileKind, times: RecordTimes): RdfNode[] {
    let profile = this.profiles.get(kind);
    if (profile === undefined)
      this.profiles.set(kind, (profile = profileNode(this.base, kind).freeze()));
    return [
      new RdfNode(`${topic}#record`, [dcat.CatalogRecord])
        .ref(foaf.primaryTopic, topic)
        .lit(dct.issued, times.issued, xsd.dateTime)
        .lit(dct.modified, times.modified, xsd.dateTime)
        .ref(dct.conformsTo, profile.id),
      profile,
    ];
  }

  private container(id: string, title: string, owner: string, relation: string, members: string[]) {
    const node = new RdfNode(id, [ldp.DirectContainer])
      .lit(dct.title, title)
      .ref(ldp.membershipResource, owner)
      .ref(ldp.hasMemberRelation, relation);
    for (const member of members) node.ref(ldp.contains, member);
    return node;
  }

  /** The root: the FAIR Data Point, a metadata service and a dcat:DataService. */
  root(times: RecordTimes): FdpRecord {
    const { iris } = this;
    const name = this.exporter.config.publisherName;
    const root = new RdfNode(iris.root(), [
      fdp.FAIRDataPoint,
      fdp.MetadataService,
      dcat.DataService,
      // What FAIR Data Point indexes look for (FAIRDataPoint-index, MetadataRetrievalUtils.java).
      r3d.Repository,
    ])
      .lit(dct.title, `${name} FAIR Data Point`)
      .lit(dct.description, `The metadata of the research data held by ${name}.`)
      .ref(dcat.endpointURL, iris.root())
      .ref(fdp.conformsToFdpSpec, FDP_SPEC)
      .ref(fdp.metadataIdentifier, iris.root())
      .lit(fdp.metadataIssued, times.issued, xsd.dateTime)
      .lit(fdp.metadataModified, times.modified, xsd.dateTime)
      .ref(fdp.metadataCatalog, iris.catalog());
    if (this.vpDiscoverable) root.ref(ejp.vpConnection, VP_DISCOVERABLE);
    this.resource(root, times);
    const catalogs = this.container(
      `${iris.root()}#catalogs`,
      'Catalogs',
      iris.root(),
      fdp.metadataCatalog,
      [iris.catalog()],
    );
    const nodes = [
      root,
      catalogs,
      ...this.record(iris.root(), 'fdp', times),
      ...this.exporter.agentNodes(),
    ];
    return { kind: 'fdp', nodes: merge(nodes), modified: times.modified };
  }

  /** One page of the catalog: its description (first page) and its container of datasets. */
  catalog(datasetIris: string[], page: PageInfo, times: RecordTimes): FdpRecord {
    const { iris } = this;
    const nodes = this.exporter.catalogNodes(datasetIris, page);
    const catalog = nodes.find((n) => n.id === iris.catalog())!;
    // The root is no dcat:Catalog: DCAT-AP's dct:isPartOf would want one; fdp-o:metadataCatalog links them.
    this.resource(catalog, times);
    catalog.lit(dct.issued, times.issued, xsd.dateTime);
    catalog.lit(dct.modified, times.modified, xsd.dateTime);
    if (this.vpDiscoverable) catalog.ref(ejp.vpConnection, VP_DISCOVERABLE);
    const container = this.container(
      `${iris.catalog()}#datasets`,
      'Datasets',
      iris.catalog(),
      dcat.dataset,
      datasetIris,
    );
    const all = [...nodes, container, ...this.record(iris.catalog(), 'catalog', times)];
    return { kind: 'catalog', nodes: merge(all), modified: times.modified };
  }

  /**
   * A dataset and its distributions as the exporter maps them, split into the dataset's record
   * (with a container of its distributions) and one record per distribution.
   */
  dataset(facts: DatasetFacts, times: RecordTimes): Map<string, FdpRecord> {
    const { iris } = this;
    const id = iris.dataset(facts.accession);
    // The exporter (with these IRIs) names the distributions and their checksums as records.
    const nodes = this.exporter.datasetNodes(facts);
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const distributionIds: string[] = [];
    for (const node of nodes)
      for (const o of node.statements.get(dcat.distribution) ?? [])
        if (isIri(o)) distributionIds.push(o.iri);
    const records = new Map<string, FdpRecord>();
    for (const distId of distributionIds) {
      const dist = byId.get(distId)!;
      toDateTimes(dist);
      this.resource(dist, times, id);
      // No dcat:CatalogRecord: DCAT-AP's records describe catalogued resources (datasets, data
      // services, catalogs), not distributions; the metadata's dates are said as the FDP says them.
      dist
        .lit(fdp.metadataIssued, times.issued, xsd.dateTime)
        .lit(fdp.metadataModified, times.modified, xsd.dateTime);
      const linked = new Set<string>();
      for (const objects of dist.statements.values())
        for (const o of objects) if (isIri(o)) linked.add(o.iri);
      const checksum = byId.get(`${distId}#checksum`);
      for (const o of checksum?.statements.get(spdx.algorithm) ?? [])
        if (isIri(o)) linked.add(o.iri);
      const parts = nodes.filter((n) => n.id !== distId && linked.has(n.id));
      records.set(distId, {
        kind: 'distribution',
        nodes: merge([dist, ...parts, ...this.exporter.agentNodes()]),
        modified: times.modified,
      });
    }
    const distributions = new Set(distributionIds);
    const own = nodes.filter((n) => !distributions.has(n.id) && !n.id.endsWith('#checksum'));
    const ds = byId.get(id)!;
    this.resource(ds, times, iris.catalog());
    if (!ds.statements.has(dcat.theme))
      // Every dataset of a research institute's catalog is research data (the FDP needs a theme).
      ds.ref(dcat.theme, `${EU_THEME}TECH`);
    if (this.vpDiscoverable || facts.vp_discoverable) ds.ref(ejp.vpConnection, VP_DISCOVERABLE);
    const container = this.container(
      `${id}#distributions`,
      'Distributions',
      id,
      dcat.distribution,
      distributionIds,
    );
    const recordNodes = [
      ...own,
      ...oneContact(ds, facts.title, own),
      // The distributions' types, so the dataset's record alone says what it links to.
      ...distributionIds.map((d) => new RdfNode(d, [dcat.Distribution])),
      container,
      ...this.exporter.agentNodes(),
      ...this.record(id, 'dataset', times),
    ];
    records.set(id, { kind: 'dataset', nodes: merge(recordNodes), modified: times.modified });
    return records;
  }
}

/** The FDP's dates are xsd:dateTime: an import's date is its day's start, UTC. */
function toDateTimes(node: RdfNode) {
  for (const predicate of [dct.issued, dct.modified]) {
    const objects = node.statements.get(predicate);
    if (objects === undefined) continue;
    node.statements.set(
      predicate,
      objects.map((o) =>
        !isIri(o) && o.datatype === xsd.date
          ? { value: `${o.value}T00:00:00Z`, datatype: xsd.dateTime }
          : o,
      ),
    );
  }
}

/**
 * The FDP allows one dcat:contactPoint: several custodians become one vcard:Group of them
 * (each still a vcard:Kind with name and e-mail).
 */
function oneContact(ds: RdfNode, title: string, nodes: RdfNode[]): RdfNode[] {
  const contacts = ds.statements.get(dcat.contactPoint) ?? [];
  if (contacts.length < 2) return [];
  const group = new RdfNode(`${ds.id}#contacts`, [vcard.Kind, vcard.Group]).lit(
    vcard.fn,
    `Custodians of ${title}`,
  );
  // A group is reached at its first member's address (HealthDCAT-AP wants one e-mail or URL).
  for (const c of contacts)
    if (isIri(c)) {
      group.ref(vcard.hasMember, c.iri);
      const email = nodes
        .find((n) => n.id === c.iri)
        ?.statements.get(vcard.hasEmail)
        ?.find(isIri);
      if (!group.statements.has(vcard.hasEmail) && email !== undefined)
        group.ref(vcard.hasEmail, email.iri);
    }
  ds.statements.set(dcat.contactPoint, [{ iri: group.id }]);
  return [group];
}
