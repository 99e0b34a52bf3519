import {
  iri,
  IRI_REFUSED,
  isIri,
  NS,
  type Prefix,
  RdfNode,
  splitIri,
  type Term,
} from './rdf-graph';

/**
 * Streaming serialisations of a graph given as subjects (RdfNode): `start` once, `nodes` for
 * each batch (the text of those subjects only), `end` once. None keeps anything between
 * batches, so a page of any size is written in the memory of one batch.
 */
export interface RdfWriter {
  readonly mediaType: string;
  start(): string;
  nodes(nodes: RdfNode[]): string;
  end(): string;
}

export const RDF_FORMATS = ['ttl', 'jsonld', 'rdf'] as const;
export type RdfFormat = (typeof RDF_FORMATS)[number];

export const MEDIA_TYPES: Record<RdfFormat, string> = {
  ttl: 'text/turtle',
  jsonld: 'application/ld+json',
  rdf: 'application/rdf+xml',
};

const RDF_TYPE = iri('rdf', 'type');
const prefixes = Object.entries(NS) as [Prefix, string][];

// ---------------------------------------------------------------- Turtle

// eslint-disable-next-line no-control-regex
const IRI_REFUSED_ALL = /[\u0000-\u0020<>"{}|^`\\]/g;

/** An IRIREF: characters Turtle refuses inside `<>` as \u escapes (looked for first: most have none). */
const turtleIri = (value: string) =>
  IRI_REFUSED.test(value)
    ? `<${value.replace(IRI_REFUSED_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}>`
    : `<${value}>`;

const turtleName = (value: string) => {
  const split = splitIri(value);
  return split === undefined ? turtleIri(value) : `${split[0]}:${split[1]}`;
};

const STRING_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};
const NEEDS_ESCAPE = /[\\"\n\r\t]/;
const NEEDS_ESCAPE_ALL = /[\\"\n\r\t]/g;

const turtleString = (value: string) =>
  NEEDS_ESCAPE.test(value)
    ? `"${value.replace(NEEDS_ESCAPE_ALL, (c) => STRING_ESCAPES[c])}"`
    : `"${value}"`;

/**
 * Names of predicates and datatypes: the export writes a fixed set of them (from the code, never
 * from data), so they are split once per process.
 */
const fixedNames = new Map<string, string>();
const fixedName = (value: string) => {
  let name = fixedNames.get(value);
  if (name === undefined) fixedNames.set(value, (name = turtleName(value)));
  return name;
};

/**
 * The Turtle text of IRI objects that are not the catalog's own (IriTerm.own): vocabulary terms
 * (access rights, themes, types, legal bases, the legislation), written many times a page,
 * looked at once each; a bounded map, emptied when full. An IRI from data (a custodian's mailto:,
 * a DRS URI) is looked at when first met, as before, and takes a place until the map is emptied.
 */
const objectNames = new Map<string, string>();
const MAX_OBJECT_NAMES = 4096;
const turtleObjectName = (value: string) => {
  let name = objectNames.get(value);
  if (name === undefined) {
    name = turtleName(value);
    if (objectNames.size >= MAX_OBJECT_NAMES) objectNames.clear();
    objectNames.set(value, name);
  }
  return name;
};

/** `^^name` of each datatype (a fixed set, as `fixedName`). */
const datatypeSuffixes = new Map<string, string>();

const turtleTerm = (term: Term) => {
  // The catalog's own IRIs are written as built: looked at, each (a string just concatenated)
  // would be flattened, a copy, before the answer's text is (decisions/dcat-own-iris.md).
  if (isIri(term)) return term.own === true ? `<${term.iri}>` : turtleObjectName(term.iri);
  const text = turtleString(term.value);
  if (term.datatype === undefined) return text;
  let suffix = datatypeSuffixes.get(term.datatype);
  if (suffix === undefined)
    datatypeSuffixes.set(term.datatype, (suffix = `^^${fixedName(term.datatype)}`));
  return text + suffix;
};

/**
 * What precedes a predicate's objects, as its subject's first predicate and as a later one (a
 * fixed set, as `fixedName`): one string appended instead of three.
 */
const predicateHeads = new Map<string, [string, string]>();
const predicateHead = (predicate: string): [string, string] => {
  let heads = predicateHeads.get(predicate);
  if (heads === undefined) {
    const name = predicate === RDF_TYPE ? 'a' : fixedName(predicate);
    predicateHeads.set(predicate, (heads = [`\n  ${name} `, ` ;\n  ${name} `]));
  }
  return heads;
};

/**
 * The text `turtleNode` is appending to, and whether a predicate was written: module state, so
 * the statements are visited with `forEach` and a callback made once (a `for…of` over the map
 * makes an entry and a result object per predicate: a tenth of what mapping and writing a dataset
 * allocated, decisions/dcat-fewer-allocations.md).
 */
let turtleText = '';
let turtleLater = 0;
const turtleStatement = (objects: Term[], predicate: string) => {
  turtleText += predicateHead(predicate)[turtleLater];
  turtleLater = 1;
  for (let i = 0; i < objects.length; i++) {
    if (i > 0) turtleText += ', ';
    turtleText += turtleTerm(objects[i]);
  }
};

/** `out` followed by the text of `node`. */
function turtleNode(out: string, node: RdfNode): string {
  turtleText = out + (node.ownId ? `<${node.id}>` : turtleIri(node.id));
  turtleLater = 0;
  node.statements.forEach(turtleStatement);
  const text = turtleText + ' .\n\n';
  turtleText = '';
  return text;
}

/**
 * The text of shared nodes (RdfNode.frozen: vocabulary terms, the publisher, the profiles),
 * written into every dataset's or record's text: kept while the node lives.
 */
const frozenTurtle = new WeakMap<RdfNode, string>();

const TURTLE_PREFIXES = prefixes.map(([p, ns]) => `@prefix ${p}: <${ns}> .\n`).join('') + '\n';

/**
 * A Turtle writer for one answer. A shared node (RdfNode.frozen: a vocabulary term, the
 * publisher, the legislation) is written the first time it comes in the answer and skipped after:
 * the same triples again add nothing to the graph, and most datasets of a page name the same
 * terms (decisions/dcat-shared-nodes-once.md).
 */
export function turtleWriter(): RdfWriter {
  const written = new Set<RdfNode>();
  return {
    mediaType: MEDIA_TYPES.ttl,
    // The same for every answer (each FAIR Data Point record starts with it): written once.
    start: () => TURTLE_PREFIXES,
    // One string built by appending (no array per subject and statement to join); a shared node's
    // text is kept once written.
    nodes: (nodes) => {
      let out = '';
      for (const node of nodes) {
        if (!node.frozen) {
          out = turtleNode(out, node);
          continue;
        }
        if (written.has(node)) continue;
        written.add(node);
        let text = frozenTurtle.get(node);
        if (text === undefined) frozenTurtle.set(node, (text = turtleNode('', node)));
        out += text;
      }
      return out;
    },
    end: () => '',
  };
}

// ---------------------------------------------------------------- JSON-LD

/** Predicates and datatypes as JSON strings (a fixed set, as for Turtle's `fixedName`). */
const jsonNames = new Map<string, string>();
const jsonName = (value: string) => {
  let name = jsonNames.get(value);
  if (name === undefined) jsonNames.set(value, (name = JSON.stringify(value)));
  return name;
};

/** `out` followed by the JSON object of `node`. */
function jsonLdNode(out: string, node: RdfNode): string {
  out += `{"@id":${JSON.stringify(node.id)}`;
  for (const [predicate, objects] of node.statements) {
    if (predicate === RDF_TYPE) {
      out += ',"@type":[';
      for (let i = 0; i < objects.length; i++) {
        const o = objects[i];
        // JSON.stringify writes a missing array member as null (a type is always an IRI).
        out += (i === 0 ? '' : ',') + (isIri(o) ? JSON.stringify(o.iri) : 'null');
      }
    } else {
      out += `,${jsonName(predicate)}:[`;
      for (let i = 0; i < objects.length; i++) {
        const o = objects[i];
        out += i === 0 ? '{' : ',{';
        if (isIri(o)) out += `"@id":${JSON.stringify(o.iri)}}`;
        else {
          out += `"@value":${JSON.stringify(o.value)}`;
          out += o.datatype === undefined ? '}' : `,"@type":${jsonName(o.datatype)}}`;
        }
      }
    }
    out += ']';
  }
  return out + '}';
}

/** The JSON-LD text of shared nodes, as `frozenTurtle` keeps their Turtle. */
const frozenJsonLd = new WeakMap<RdfNode, string>();

/**
 * JSON-LD 1.1 with the DCAT-AP context by reference (`contextUrl`). Properties and types are
 * written as absolute IRIs and every value as an explicit `@id` or `@value` object, so the
 * triples never depend on how a processor reads the context's terms (see the decision record).
 */
export function jsonLdWriter(contextUrl: string): RdfWriter {
  let first = true;
  /** Shared nodes already written in this answer (as for Turtle). */
  const written = new Set<RdfNode>();
  return {
    mediaType: MEDIA_TYPES.jsonld,
    start: () => `{"@context":${JSON.stringify(contextUrl)},"@graph":[`,
    // Written as JSON.stringify would write {"@id": …, "@type": […], predicate: [{…}]} (keys in
    // statement order, each string by JSON.stringify), without building that object first.
    nodes: (nodes) => {
      let out = '';
      for (const node of nodes) {
        if (node.frozen) {
          if (written.has(node)) continue;
          written.add(node);
        }
        if (!first) out += ',';
        first = false;
        if (!node.frozen) {
          out = jsonLdNode(out, node);
          continue;
        }
        let text = frozenJsonLd.get(node);
        if (text === undefined) frozenJsonLd.set(node, (text = jsonLdNode('', node)));
        out += text;
      }
      return out;
    },
    end: () => ']}',
  };
}

// ---------------------------------------------------------------- RDF/XML

const xmlEscape = (value: string) =>
  value.replace(
    /[&<>"\r\n\t]/g,
    (c) =>
      ({
        '&': '&amp;',
        '<': '&lt;',
        '>': '&gt;',
        '"': '&quot;',
        '\r': '&#13;',
        '\n': '&#10;',
        '\t': '&#9;',
      })[c]!,
  );

/** The element name of a predicate; every predicate the export writes is in a known namespace. */
const xmlName = (predicate: string) => {
  const split = splitIri(predicate);
  if (split === undefined) throw new Error(`no RDF/XML element name for ${predicate}`);
  return `${split[0]}:${split[1]}`;
};

export const rdfXmlWriter: RdfWriter = {
  mediaType: MEDIA_TYPES.rdf,
  start: () =>
    `<?xml version="1.0" encoding="utf-8"?>\n<rdf:RDF${prefixes
      .map(([p, ns]) => `\n    xmlns:${p}="${xmlEscape(ns)}"`)
      .join('')}>\n`,
  nodes: (nodes) =>
    nodes
      .map((node) => {
        const properties: string[] = [];
        for (const [predicate, objects] of node.statements) {
          const name = xmlName(predicate);
          for (const o of objects) {
            if (isIri(o)) properties.push(`    <${name} rdf:resource="${xmlEscape(o.iri)}"/>`);
            else {
              const datatype =
                o.datatype === undefined ? '' : ` rdf:datatype="${xmlEscape(o.datatype)}"`;
              properties.push(`    <${name}${datatype}>${xmlEscape(o.value)}</${name}>`);
            }
          }
        }
        return `  <rdf:Description rdf:about="${xmlEscape(node.id)}">\n${properties.join('\n')}\n  </rdf:Description>\n`;
      })
      .join(''),
  end: () => '</rdf:RDF>\n',
};

export function rdfWriter(format: RdfFormat, contextUrl: string): RdfWriter {
  if (format === 'jsonld') return jsonLdWriter(contextUrl);
  return format === 'rdf' ? rdfXmlWriter : turtleWriter();
}
