// RDF checks of the DCAT export, run by the tests as a child process: shacl-engine is an ES
// module, which Jest's CommonJS runtime cannot load. Reads a JSON request on stdin, writes a
// JSON answer on stdout.
//
//   {"op":"parse","format":"ttl|jsonld|rdf","file":…,"context":…}
//     -> {"triples":[sorted N-Triples lines],"blankNodes":n}
//   {"op":"validate","profile":"dcat-ap-3.0.1|healthdcat-ap-r8-<public|restricted|non-public>","file":…(Turtle)}
//     -> {"violations":[…],"warnings":n,"conforms":bool}
//   {"op":"shapes","profile":…,"out":…} -> the profile's shapes as the checker fixes them, as
//     N-Triples in `out` (for another engine: Apache Jena, test/support/jena-shacl.ts)
//   {"op":"data","file":…(Turtle),"level":…?,"out":…} -> the data (of one access level) and the
//     EU vocabularies as N-Triples in `out`; answers {"subjects":[the data's own subjects]}
//
// The shapes and vocabularies are read from ../shared/reference/dcat/ (their README says how
// they combine and which upstream problems the checker works around; docs/dcat.md repeats it).
import { readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser, Store, DataFactory, Writer } from 'n3';
import jsonld from 'jsonld';
import { RdfXmlParser } from 'rdfxml-streaming-parser';

const here = dirname(fileURLToPath(import.meta.url));
const REF = join(here, '../../../../../shared/reference/dcat');
const { namedNode, quad } = DataFactory;
const SH = 'http://www.w3.org/ns/shacl#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

function parseTurtle(text, base) {
  return new Parser({ baseIRI: base }).parse(text);
}

function parseRdfXml(text) {
  return new Promise((resolve, reject) => {
    const quads = [];
    const parser = new RdfXmlParser({ baseIRI: 'http://example.invalid/' });
    parser.on('data', (q) => quads.push(q));
    parser.on('error', reject);
    parser.on('end', () => resolve(quads));
    parser.write(text);
    parser.end();
  });
}

async function parseJsonLd(text, contextFile) {
  const context = JSON.parse(readFileSync(contextFile, 'utf8'));
  const documentLoader = async (url) => {
    if (url.endsWith('/api/dcat/context.jsonld'))
      return { contextUrl: null, documentUrl: url, document: context };
    throw new Error(`no network in tests: ${url}`);
  };
  const nquads = await jsonld.toRDF(JSON.parse(text), {
    format: 'application/n-quads',
    documentLoader,
    safe: true,
  });
  return new Parser({ format: 'N-Quads' }).parse(nquads);
}

async function parse(format, text, contextFile) {
  if (format === 'ttl') return parseTurtle(text);
  if (format === 'rdf') return parseRdfXml(text);
  return parseJsonLd(text, contextFile);
}

const nt = (q) =>
  new Writer({ format: 'N-Triples' }).quadToString(q.subject, q.predicate, q.object);

async function loadRdfXmlFile(path) {
  return parseRdfXml(readFileSync(path, 'utf8'));
}

/**
 * The shapes of a profile, with the two shape fixes the reference README names and a third
 * (docs/dcat.md, "Checksum algorithm").
 */
function shapesOf(profile) {
  const files = [];
  if (profile === 'dcat-ap-3.0.1') {
    const s = join(REF, 'dcat-ap-3.0.1/html/shacl');
    files.push(
      ...[
        'shapes.ttl',
        'range.ttl',
        'shapes_recommended.ttl',
        'mdr-vocabularies.shape.ttl',
        'deprecateduris.ttl',
      ].map((f) => join(s, f)),
    );
  } else {
    const level = /^healthdcat-ap-r8-(public|restricted|non-public)$/.exec(profile)?.[1];
    if (level === undefined) throw new Error(`unknown profile ${profile}`);
    const v = join(REF, 'healthdcat-ap/release-8/validator');
    const old = join(REF, 'healthdcat-ap/dcat-ap-3.0.0-imports/html/shacl');
    files.push(
      join(v, 'shapes/graph-guard.ttl'),
      join(old, 'deprecateduris.ttl'),
      join(v, 'ranges/range.ttl'),
      join(v, `shapes/${level}-shapes.ttl`),
      join(v, 'controlled-vocabularies/mdr-vocabularies.shape.ttl'),
      join(v, `recommended/${level}-shapes_recommended.ttl`),
      join(old, 'shapes.ttl'),
      join(old, 'range.ttl'),
      join(old, 'shapes_recommended.ttl'),
    );
  }
  const store = new Store();
  for (const file of files)
    store.addQuads(parseTurtle(readFileSync(file, 'utf8'), `file://${file}`));
  // 1. An sh:property without sh:path (HealthDCAT-AP's "structured data => variables" sh:or)
  //    is what sh:node means: strict engines refuse it as a property shape.
  for (const q of store.getQuads(null, namedNode(`${SH}property`), null)) {
    if (store.getQuads(q.object, namedNode(`${SH}path`), null).length === 0) {
      store.removeQuad(q);
      store.addQuad(quad(q.subject, namedNode(`${SH}node`), q.object));
    }
  }
  // 2. dcat:byteSize: DCAT-AP 3.0.1 says xsd:nonNegativeInteger, the 3.0.0 shapes HealthDCAT-AP
  //    imports say xsd:decimal; one literal cannot satisfy both: 3.0.1 is followed.
  for (const q of store.getQuads(
    null,
    namedNode(`${SH}path`),
    namedNode('http://www.w3.org/ns/dcat#byteSize'),
  )) {
    for (const d of store.getQuads(
      q.subject,
      namedNode(`${SH}datatype`),
      namedNode('http://www.w3.org/2001/XMLSchema#decimal'),
    )) {
      store.removeQuad(d);
      store.addQuad(
        quad(
          q.subject,
          d.predicate,
          namedNode('http://www.w3.org/2001/XMLSchema#nonNegativeInteger'),
        ),
      );
    }
  }
  // 3. The checksum algorithm: DCAT-AP 3.0.1's ChecksumAlgorithmRestriction wants the IRI to
  //    start with https://spdx.org/rdf/terms, while its own sh:class, every DCAT-AP `spdx:`
  //    prefix, the JSON-LD context and SPDX's ontology say http://spdx.org/rdf/terms# (and
  //    HealthDCAT-AP's copy of the shape has no pattern): that one pattern is dropped, the
  //    shape's sh:class still applies.
  for (const q of store.getQuads(null, namedNode(`${SH}pattern`), null)) {
    if (
      q.object.value === '^https://spdx.org/rdf/terms' &&
      store.getQuads(
        q.subject,
        namedNode(`${SH}class`),
        namedNode('http://spdx.org/rdf/terms#ChecksumAlgorithm'),
      ).length > 0
    )
      store.removeQuad(q);
  }
  return store;
}

/** Only the datasets of one access level (and what is not a dataset), as the HDEU validator checks a level. */
function keepLevel(quads, level) {
  const DATASET = 'http://www.w3.org/ns/dcat#Dataset';
  const ACCESS = 'http://purl.org/dc/terms/accessRights';
  const wanted = `http://publications.europa.eu/resource/authority/access-right/${level}`;
  const datasets = new Set(
    quads
      .filter((q) => q.predicate.value === RDF_TYPE && q.object.value === DATASET)
      .map((q) => q.subject.value),
  );
  const kept = new Set(
    quads
      .filter((q) => q.predicate.value === ACCESS && q.object.value === wanted)
      .map((q) => q.subject.value),
  );
  const dropped = [...datasets].filter((d) => !kept.has(d));
  // Their distributions too, wherever they are named (a FAIR Data Point gives each its own IRI).
  const droppedSet = new Set(dropped);
  for (const q of quads)
    if (
      droppedSet.has(q.subject.value) &&
      q.predicate.value === 'http://www.w3.org/ns/dcat#distribution'
    )
      dropped.push(q.object.value);
  const gone = (iri) => dropped.some((d) => iri === d || iri.startsWith(`${d}#`));
  return quads.filter((q) => !gone(q.subject.value) && !gone(q.object.value));
}

/** The data (of one access level) and the EU vocabularies it is checked with, and its own subjects. */
async function dataGraph(text, level) {
  let data = parseTurtle(text);
  if (level !== undefined) data = keepLevel(data, level);
  const exportSubjects = new Set(data.map((q) => q.subject.value));
  const dataset = new Store(data);
  const vocabularies = join(REF, 'vocabularies');
  for (const f of [
    'access-right-skos-ap-act.rdf',
    'data-theme-skos-ap-act.rdf',
    'frequencies-skos.rdf',
    'filetypes-skos-ap-act.rdf',
    'ADMS_SKOS_v1.00.rdf',
  ]) {
    dataset.addQuads(await loadRdfXmlFile(join(vocabularies, f)));
  }
  return { data, dataset, exportSubjects };
}

function writeNTriples(store, out) {
  writeFileSync(
    out,
    new Writer({ format: 'N-Triples' }).quadsToString(store.getQuads(null, null, null, null)),
  );
}

async function validate(profile, text, level) {
  const { data, dataset, exportSubjects } = await dataGraph(text, level);
  // Loaded here only: shacl-engine with its SPARQL engine takes seconds to import.
  const { default: Validator } = await import('shacl-engine/Validator.js');
  const { targetResolvers, validations } = await import('shacl-engine/sparql.js');
  const validator = new Validator(shapesOf(profile), {
    factory: DataFactory,
    targetResolvers,
    validations,
  });
  const report = await validator.validate({ dataset });
  const results = report.results.map((r) => ({
    severity: r.severity?.value.replace(SH, ''),
    focusNode: r.focusNode?.value,
    path: r.path?.[0]?.predicates?.map((p) => p.value).join('|') ?? r.path?.value ?? null,
    message: r.message?.map((m) => m.value).join(' '),
    shape: r.shape?.ptrs?.[0]?.term?.value ?? null,
    component: r.constraintComponent?.value,
  }));
  // The NAL files' own nodes (concept schemes without dct:title) are not the export's: the
  // hosted validators flag them too. Only results on the export's subjects count.
  const ours = results.filter((r) => exportSubjects.has(r.focusNode));
  return {
    violations: ours.filter((r) => r.severity === 'Violation'),
    warnings: ours.filter((r) => r.severity !== 'Violation').length,
    conforms: ours.every((r) => r.severity !== 'Violation'),
    triples: data.length,
  };
}

const request = JSON.parse(readFileSync(0, 'utf8'));
const text = request.file === undefined ? '' : readFileSync(request.file, 'utf8');
let answer;
if (request.op === 'shapes') {
  writeNTriples(shapesOf(request.profile), request.out);
  answer = {};
} else if (request.op === 'data') {
  const { dataset, exportSubjects } = await dataGraph(text, request.level);
  writeNTriples(dataset, request.out);
  answer = { subjects: [...exportSubjects] };
} else if (request.op === 'parse') {
  const quads = await parse(request.format, text, request.context);
  const blank = new Set();
  for (const q of quads)
    for (const t of [q.subject, q.object]) if (t.termType === 'BlankNode') blank.add(t.value);
  answer = { triples: [...new Set(quads.map(nt))].sort(), blankNodes: blank.size };
} else {
  answer = await validate(request.profile, text, request.level);
}
process.stdout.write(JSON.stringify(answer));
