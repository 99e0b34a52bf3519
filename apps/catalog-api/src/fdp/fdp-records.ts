import { DcatExporter, DcatIris, merge, type PageInfo } from '../dcat/dcat.exporter';
import type { DatasetFacts } from '../dcat/dcat.repository';
import { iri, isIri, RdfNode, type Term } from '../dcat/rdf-graph';
import { profileNode, type ProfileKind } from './fdp-profiles';

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
  distribution = (accession: string, key: string) =>
    `${this.base}/fdp/distribution/${encodeURIComponent(accession)}/${encodeURIComponent(key)}`;
}

/** The FDP specification the root says it follows. */
export const FDP_SPEC = 'https://specs.fairdatapoint.org/fdp-specs-v1.2.html';
const EU_THEME = 'http://publications.europa.eu/resource/authority/data-theme/';
const VP_DISCOVERABLE = iri('ejp', 'VPDiscoverable');
const xsd = (local: string) => iri('xsd', local);

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
    node.ref(iri('rdf', 'type'), iri('dcat', 'Resource')).ref(iri('dct', 'isPartOf'), parent);
    if (!node.statements.has(iri('dct', 'publisher')))
      node.ref(iri('dct', 'publisher'), this.exporter.publisherIri());
    // A version that changes when the metadata does: the time it last changed.
    node.lit(iri('dcat', 'version'), times.modified);
    return node;
  }

  /** The dcat:CatalogRecord of the record at `topic`. */
  private record(topic: string, kind: ProfileKind, times: RecordTimes): RdfNode[] {
    const profile = profileNode(this.base, kind);
    return [
      new RdfNode(`${topic}#record`, [iri('dcat', 'CatalogRecord')])
        .ref(iri('foaf', 'primaryTopic'), topic)
        .lit(iri('dct', 'issued'), times.issued, xsd('dateTime'))
        .lit(iri('dct', 'modified'), times.modified, xsd('dateTime'))
        .ref(iri('dct', 'conformsTo'), profile.id),
      profile,
    ];
  }

  private container(id: string, title: string, owner: string, relation: string, members: string[]) {
    const node = new RdfNode(id, [iri('ldp', 'DirectContainer')])
      .lit(iri('dct', 'title'), title)
      .ref(iri('ldp', 'membershipResource'), owner)
      .ref(iri('ldp', 'hasMemberRelation'), relation);
    for (const member of members) node.ref(iri('ldp', 'contains'), member);
    return node;
  }

  /** The root: the FAIR Data Point, a metadata service and a dcat:DataService. */
  root(times: RecordTimes): FdpRecord {
    const { iris } = this;
    const name = this.exporter.config.publisherName;
    const root = new RdfNode(iris.root(), [
      iri('fdp', 'FAIRDataPoint'),
      iri('fdp', 'MetadataService'),
      iri('dcat', 'DataService'),
      // What FAIR Data Point indexes look for (FAIRDataPoint-index, MetadataRetrievalUtils.java).
      iri('r3d', 'Repository'),
    ])
      .lit(iri('dct', 'title'), `${name} FAIR Data Point`)
      .lit(iri('dct', 'description'), `The metadata of the research data held by ${name}.`)
      .ref(iri('dcat', 'endpointURL'), iris.root())
      .ref(iri('fdp', 'conformsToFdpSpec'), FDP_SPEC)
      .ref(iri('fdp', 'metadataIdentifier'), iris.root())
      .lit(iri('fdp', 'metadataIssued'), times.issued, xsd('dateTime'))
      .lit(iri('fdp', 'metadataModified'), times.modified, xsd('dateTime'))
      .ref(iri('fdp', 'metadataCatalog'), iris.catalog());
    if (this.vpDiscoverable) root.ref(iri('ejp', 'vpConnection'), VP_DISCOVERABLE);
    this.resource(root, times);
    const catalogs = this.container(
      `${iris.root()}#catalogs`,
      'Catalogs',
      iris.root(),
      iri('fdp', 'metadataCatalog'),
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
    catalog.lit(iri('dct', 'issued'), times.issued, xsd('dateTime'));
    catalog.lit(iri('dct', 'modified'), times.modified, xsd('dateTime'));
    if (this.vpDiscoverable) catalog.ref(iri('ejp', 'vpConnection'), VP_DISCOVERABLE);
    const container = this.container(
      `${iris.catalog()}#datasets`,
      'Datasets',
      iris.catalog(),
      iri('dcat', 'dataset'),
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
    const all = this.exporter.datasetNodes(facts);
    // The exporter names a distribution `<dataset>#<key>` and its checksum `<that>-checksum`.
    const renames = new Map<string, string>();
    for (const node of all)
      for (const o of node.statements.get(iri('dcat', 'distribution')) ?? [])
        if (isIri(o)) {
          const key = o.iri.slice(id.length + 1);
          renames.set(o.iri, iris.distribution(facts.accession, key));
          renames.set(`${o.iri}-checksum`, `${iris.distribution(facts.accession, key)}#checksum`);
        }
    const nodes = all.map((n) => rename(n, renames));
    const distributionIds = [...renames.values()].filter((v) => !v.endsWith('#checksum'));
    const records = new Map<string, FdpRecord>();
    for (const distId of distributionIds) {
      const dist = nodes.find((n) => n.id === distId)!;
      toDateTimes(dist);
      this.resource(dist, times, id);
      // No dcat:CatalogRecord: DCAT-AP's records describe catalogued resources (datasets, data
      // services, catalogs), not distributions; the metadata's dates are said as the FDP says them.
      dist
        .lit(iri('fdp', 'metadataIssued'), times.issued, xsd('dateTime'))
        .lit(iri('fdp', 'metadataModified'), times.modified, xsd('dateTime'));
      const linked = new Set(
        [...dist.statements.values()]
          .flat()
          .filter(isIri)
          .map((o) => o.iri),
      );
      const checksum = nodes.find((n) => n.id === `${distId}#checksum`);
      for (const o of checksum?.statements.get(iri('spdx', 'algorithm')) ?? [])
        if (isIri(o)) linked.add(o.iri);
      const parts = nodes.filter((n) => n.id !== distId && linked.has(n.id));
      records.set(distId, {
        kind: 'distribution',
        nodes: merge([dist, ...parts, ...this.exporter.agentNodes()]),
        modified: times.modified,
      });
    }
    const own = nodes.filter((n) => !distributionIds.includes(n.id) && !n.id.endsWith('#checksum'));
    const ds = own.find((n) => n.id === id)!;
    this.resource(ds, times, iris.catalog());
    if (!ds.statements.has(iri('dcat', 'theme')))
      // Every dataset of a research institute's catalog is research data (the FDP needs a theme).
      ds.ref(iri('dcat', 'theme'), `${EU_THEME}TECH`);
    if (this.vpDiscoverable || facts.vp_discoverable)
      ds.ref(iri('ejp', 'vpConnection'), VP_DISCOVERABLE);
    const container = this.container(
      `${id}#distributions`,
      'Distributions',
      id,
      iri('dcat', 'distribution'),
      distributionIds,
    );
    const recordNodes = [
      ...own,
      ...oneContact(ds, facts.title, own),
      // The distributions' types, so the dataset's record alone says what it links to.
      ...distributionIds.map((d) => new RdfNode(d, [iri('dcat', 'Distribution')])),
      container,
      ...this.exporter.agentNodes(),
      ...this.record(id, 'dataset', times),
    ];
    records.set(id, { kind: 'dataset', nodes: merge(recordNodes), modified: times.modified });
    return records;
  }
}

/** `node` with its IRI and its IRI objects renamed by `names`. */
function rename(node: RdfNode, names: Map<string, string>): RdfNode {
  const out = new RdfNode(names.get(node.id) ?? node.id);
  for (const [predicate, objects] of node.statements)
    for (const o of objects as Term[])
      if (isIri(o)) out.ref(predicate, names.get(o.iri) ?? o.iri);
      else out.lit(predicate, o.value, o.datatype);
  return out;
}

/** The FDP's dates are xsd:dateTime: an import's date is its day's start, UTC. */
function toDateTimes(node: RdfNode) {
  for (const predicate of [iri('dct', 'issued'), iri('dct', 'modified')]) {
    const objects = node.statements.get(predicate);
    if (objects === undefined) continue;
    node.statements.set(
      predicate,
      objects.map((o) =>
        !isIri(o) && o.datatype === xsd('date')
          ? { value: `${o.value}T00:00:00Z`, datatype: xsd('dateTime') }
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
  const contacts = ds.statements.get(iri('dcat', 'contactPoint')) ?? [];
  if (contacts.length < 2) return [];
  const group = new RdfNode(`${ds.id}#contacts`, [iri('vcard', 'Kind'), iri('vcard', 'Group')]).lit(
    iri('vcard', 'fn'),
    `Custodians of ${title}`,
  );
  // A group is reached at its first member's address (HealthDCAT-AP wants one e-mail or URL).
  for (const c of contacts)
    if (isIri(c)) {
      group.ref(iri('vcard', 'hasMember'), c.iri);
      const email = nodes
        .find((n) => n.id === c.iri)
        ?.statements.get(iri('vcard', 'hasEmail'))
        ?.find(isIri);
      if (!group.statements.has(iri('vcard', 'hasEmail')) && email !== undefined)
        group.ref(iri('vcard', 'hasEmail'), email.iri);
    }
  ds.statements.set(iri('dcat', 'contactPoint'), [{ iri: group.id }]);
  return [group];
}
