import { iri, NS, RdfNode } from '../dcat/rdf-graph';

/**
 * The profiles the FAIR Data Point's records conform to (`dct:conformsTo`), each a W3C
 * Profiles Vocabulary `prof:Profile` whose validation artefact is a SHACL shapes graph served
 * beside it, as the reference implementation's ProfileService describes its profiles
 * (FAIRDataTeam/FAIRDataPoint, service/profile/ProfileService.java).
 *
 * The shapes are this catalog's own statement of what its records hold: the FDP's constraints
 * (every record a dcat:Resource with one title, one publisher named by foaf:name, one version;
 * dates as xsd:dateTime), with `dcat:mediaType` as DCAT-AP 3.0.1 has it (an IANA IRI) where the
 * FDP's default distribution schema wants a literal: one value cannot be both
 * (docs/decisions/fdp-profile.md).
 */
export const PROFILE_KINDS = ['fdp', 'catalog', 'dataset', 'distribution'] as const;
export type ProfileKind = (typeof PROFILE_KINDS)[number];

const TITLES: Record<ProfileKind, string> = {
  fdp: 'FAIR Data Point',
  catalog: 'Catalog',
  dataset: 'Dataset',
  distribution: 'Distribution',
};

export const profileIri = (base: string, kind: ProfileKind) => `${base}/fdp/profile/${kind}`;
export const shaclIri = (base: string, kind: ProfileKind) => `${profileIri(base, kind)}/shacl`;

/** The profile node: named in every record (DCAT-AP wants a `dct:Standard`), and served alone. */
export function profileNode(base: string, kind: ProfileKind): RdfNode {
  return new RdfNode(profileIri(base, kind), [iri('prof', 'Profile'), iri('dct', 'Standard')])
    .lit(iri('rdfs', 'label'), `${TITLES[kind]} Profile`)
    .ref(iri('prof', 'hasResource'), `${profileIri(base, kind)}#shacl`);
}

/** The profile as its own document: the profile and its SHACL resource descriptor. */
export function profileNodes(base: string, kind: ProfileKind): RdfNode[] {
  return [
    profileNode(base, kind),
    new RdfNode(`${profileIri(base, kind)}#shacl`, [iri('prof', 'ResourceDescriptor')])
      .lit(iri('rdfs', 'label'), `${TITLES[kind]} SHACL shapes`)
      .ref(iri('prof', 'hasRole'), 'http://www.w3.org/ns/dx/prof/role/validation')
      .ref(iri('dct', 'conformsTo'), 'https://www.w3.org/TR/shacl/')
      .ref(iri('dct', 'format'), 'https://www.iana.org/assignments/media-types/text/turtle')
      .ref(iri('prof', 'hasArtifact'), shaclIri(base, kind)),
  ];
}

const RESOURCE = `
:Resource a sh:NodeShape ; sh:targetClass dcat:Resource ;
  sh:property :title, :description, :publisher, :version .
:title sh:path dct:title ; sh:nodeKind sh:Literal ; sh:minCount 1 ; sh:maxCount 1 .
:description sh:path dct:description ; sh:nodeKind sh:Literal ; sh:maxCount 1 .
:publisher sh:path dct:publisher ; sh:node :Agent ; sh:minCount 1 ; sh:maxCount 1 .
:version sh:path dcat:version ; sh:nodeKind sh:Literal ; sh:minCount 1 ; sh:maxCount 1 .
:Agent a sh:NodeShape ; sh:property :agentName .
:agentName sh:path foaf:name ; sh:nodeKind sh:Literal ; sh:minCount 1 ; sh:maxCount 1 .
:Record a sh:NodeShape ; sh:targetClass dcat:CatalogRecord ;
  sh:property :recordTopic, :recordModified, :recordIssued, :recordProfile .
:recordProfile sh:path dct:conformsTo ; sh:nodeKind sh:IRI ; sh:minCount 1 .
:recordTopic sh:path foaf:primaryTopic ; sh:nodeKind sh:IRI ; sh:minCount 1 ; sh:maxCount 1 .
:recordModified sh:path dct:modified ; sh:datatype xsd:dateTime ; sh:minCount 1 ; sh:maxCount 1 .
:recordIssued sh:path dct:issued ; sh:datatype xsd:dateTime ; sh:maxCount 1 .
:Container a sh:NodeShape ; sh:targetClass ldp:DirectContainer ;
  sh:property :containerTitle, :membershipResource, :memberRelation, :contains .
:containerTitle sh:path dct:title ; sh:nodeKind sh:Literal ; sh:minCount 1 .
:membershipResource sh:path ldp:membershipResource ; sh:nodeKind sh:IRI ; sh:minCount 1 ; sh:maxCount 1 .
:memberRelation sh:path ldp:hasMemberRelation ; sh:nodeKind sh:IRI ; sh:minCount 1 ; sh:maxCount 1 .
:contains sh:path ldp:contains ; sh:nodeKind sh:IRI .
`;

const DATES = (cls: string, name: string) => `
:${name} a sh:NodeShape ; sh:targetClass ${cls} ; sh:property :${name}Issued, :${name}Modified .
:${name}Issued sh:path dct:issued ; sh:datatype xsd:dateTime ; sh:maxCount 1 .
:${name}Modified sh:path dct:modified ; sh:datatype xsd:dateTime ; sh:maxCount 1 .
`;

const SHAPES: Record<ProfileKind, string> = {
  fdp: `
:FairDataPoint a sh:NodeShape ; sh:targetClass fdp:FAIRDataPoint ;
  sh:property :endpoint, :spec, :identifier, :metadataIssued, :metadataModified .
:endpoint sh:path dcat:endpointURL ; sh:nodeKind sh:IRI ; sh:minCount 1 ; sh:maxCount 1 .
:spec sh:path fdp:conformsToFdpSpec ; sh:nodeKind sh:IRI ; sh:minCount 1 .
:identifier sh:path fdp:metadataIdentifier ; sh:nodeKind sh:IRI ; sh:maxCount 1 .
:metadataIssued sh:path fdp:metadataIssued ; sh:datatype xsd:dateTime ; sh:maxCount 1 .
:metadataModified sh:path fdp:metadataModified ; sh:datatype xsd:dateTime ; sh:maxCount 1 .
`,
  catalog: `${DATES('dcat:Catalog', 'Catalog')}
:CatalogThemes a sh:NodeShape ; sh:targetClass dcat:Catalog ; sh:property :themeTaxonomy .
:themeTaxonomy sh:path dcat:themeTaxonomy ; sh:nodeKind sh:IRI .
`,
  dataset: `${DATES('dcat:Dataset', 'Dataset')}
:DatasetTheme a sh:NodeShape ; sh:targetClass dcat:Dataset ;
  sh:property :theme, :contactPoint, :keyword .
:theme sh:path dcat:theme ; sh:nodeKind sh:IRI ; sh:minCount 1 .
:contactPoint sh:path dcat:contactPoint ; sh:nodeKind sh:IRI ; sh:maxCount 1 .
:keyword sh:path dcat:keyword ; sh:nodeKind sh:Literal .
`,
  distribution: `${DATES('dcat:Distribution', 'Distribution')}
:DistributionAccess a sh:NodeShape ; sh:targetClass dcat:Distribution ;
  sh:property :accessURL, :mediaType, :byteSize .
:accessURL sh:path dcat:accessURL ; sh:nodeKind sh:IRI ; sh:minCount 1 ; sh:maxCount 1 .
:mediaType sh:path dcat:mediaType ; sh:nodeKind sh:IRI ; sh:maxCount 1 .
:byteSize sh:path dcat:byteSize ; sh:nodeKind sh:Literal ; sh:maxCount 1 .
`,
};

/** The SHACL shapes graph of a profile, in Turtle. */
export function shaclOf(base: string, kind: ProfileKind): string {
  const prefixes = ['sh', 'dcat', 'dct', 'foaf', 'xsd', 'ldp', 'fdp']
    .map(
      (p) =>
        `@prefix ${p}: <${p === 'sh' ? 'http://www.w3.org/ns/shacl#' : NS[p as keyof typeof NS]}> .`,
    )
    .join('\n');
  return `${prefixes}\n@prefix : <${shaclIri(base, kind)}#> .\n${RESOURCE}${SHAPES[kind]}`;
}
