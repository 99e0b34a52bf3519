/**
 * A small RDF model for streaming writers: a graph is written as a sequence of subjects, each
 * with all of its statements, so each serialisation can write one subject at a time and forget
 * it. Every node has an IRI (no blank nodes): the three serialisations then give graphs that are
 * equal triple for triple, and a harvester can refer to every node.
 */

export const NS = {
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
  owl: 'http://www.w3.org/2002/07/owl#',
  dcat: 'http://www.w3.org/ns/dcat#',
  dct: 'http://purl.org/dc/terms/',
  dcatap: 'http://data.europa.eu/r5r/',
  foaf: 'http://xmlns.com/foaf/0.1/',
  vcard: 'http://www.w3.org/2006/vcard/ns#',
  skos: 'http://www.w3.org/2004/02/skos/core#',
  prov: 'http://www.w3.org/ns/prov#',
  adms: 'http://www.w3.org/ns/adms#',
  odrl: 'http://www.w3.org/ns/odrl/2/',
  dpv: 'https://w3id.org/dpv#',
  cv: 'http://data.europa.eu/m8g/',
  hydra: 'http://www.w3.org/ns/hydra/core#',
  healthdcatap: 'http://healthdataportal.eu/ns/health#',
  eli: 'http://data.europa.eu/eli/ontology#',
  spdx: 'http://spdx.org/rdf/terms#',
  ldp: 'http://www.w3.org/ns/ldp#',
  fdp: 'https://w3id.org/fdp/fdp-o#',
  prof: 'http://www.w3.org/ns/dx/prof/',
  r3d: 'http://www.re3data.org/schema/3-0#',
  ejp: 'https://w3id.org/ejp-rd/vocabulary#',
} as const;

export type Prefix = keyof typeof NS;

/**
 * The IRIs the code names, one string each: the mapping names a few hundred terms thousands of
 * times a page, and a string built anew each time is hashed anew as a statement's key and
 * garbage afterwards. Bounded: a local name from data (none today) cannot make it grow.
 */
const TERMS = new Map<Prefix, Map<string, string>>();
const MAX_TERMS = 4096;
let termCount = 0;

/** An IRI written as `prefix:local` in the code. */
export const iri = (prefix: Prefix, local: string): string => {
  let names = TERMS.get(prefix);
  if (names === undefined) TERMS.set(prefix, (names = new Map()));
  let value = names.get(local);
  if (value === undefined) {
    value = NS[prefix] + local;
    if (termCount < MAX_TERMS) {
      names.set(local, value);
      termCount += 1;
    }
  }
  return value;
};

/**
 * The IRIs of `locals` in `prefix`, by local name, built at load: a mapping that names a term
 * thousands of times a page reads a constant instead of looking it up each time (`iri`).
 */
export function terms<const L extends string>(prefix: Prefix, ...locals: L[]): Record<L, string> {
  const out = {} as Record<L, string>;
  for (const local of locals) out[local] = iri(prefix, local);
  return out;
}

export interface IriTerm {
  iri: string;
  /**
   * Built by the catalog from a plain base (`plainBase`) and its own text, numbers or
   * percent-encoded parts: no character a serialisation refuses, in no known namespace, so the
   * Turtle writer writes it as it is, without looking at it (decisions/dcat-own-iris.md).
   */
  own?: true;
}

export interface LiteralTerm {
  value: string;
  /** Absent: xsd:string. */
  datatype?: string;
}

export type Term = IriTerm | LiteralTerm;

/** Control characters and non-characters that XML 1.0 refuses, and lone surrogates. */
const NOT_XML =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Every character NOT_XML can match is one of these (a superset: controls, surrogates, U+FFFE/F). */
// eslint-disable-next-line no-control-regex
const MAYBE_NOT_XML = /[\u0000-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;
const XSD_STRING = iri('xsd', 'string');
const RDF_TYPE = iri('rdf', 'type');

/** Characters Turtle refuses inside `<>`. */
// eslint-disable-next-line no-control-regex
export const IRI_REFUSED = /[\u0000-\u0020<>"{}|^`\\]/;

/**
 * Whether IRIs made of `base` and then a path ('/…') of the code's own text, numbers and
 * percent-encoded parts may be marked `own` (IriTerm.own): `base` holds no character Turtle
 * refuses, and no known namespace starts with it (a namespace that such an IRI starts with and
 * whose length is where its local name starts would start with `base`), so none of them is
 * written `prefix:local`.
 */
export const plainBase = (base: string): boolean =>
  !IRI_REFUSED.test(base) && !Object.values(NS).some((ns) => ns.startsWith(base));

/** One subject and everything said about it, predicates in insertion order. */
export class RdfNode {
  readonly statements = new Map<string, Term[]>();
  /** Keys of the objects of long lists, by predicate (see `add`). */
  private keys?: Map<string, Set<string>>;
  /**
   * Shared by many graphs (a vocabulary term, the publisher): built once, never changed again
   * (`merge` adds to a copy), so a writer may keep its text (see `freeze`).
   */
  private isFrozen = false;

  constructor(
    readonly id: string,
    types: string[] = [],
    /** `id` is the catalog's own (IriTerm.own). */
    readonly ownId = false,
  ) {
    for (const type of types) this.ref(RDF_TYPE, type);
  }

  get frozen(): boolean {
    return this.isFrozen;
  }

  /** Marks the node shared and complete: adding to it afterwards is a bug and throws. */
  freeze(): this {
    this.isFrozen = true;
    return this;
  }

  /** A node with the same statements that can be added to. */
  copy(): RdfNode {
    const out = new RdfNode(this.id, [], this.ownId);
    for (const [predicate, objects] of this.statements) out.statements.set(predicate, [...objects]);
    return out;
  }

  /**
   * Adds an IRI object (nothing when `object` is null or undefined); `own` when the catalog built
   * it from a plain base (IriTerm.own).
   */
  ref(predicate: string, object: string | null | undefined, own = false): this {
    if (object !== null && object !== undefined)
      this.add(predicate, own ? { iri: object, own } : { iri: object });
    return this;
  }

  /** Adds a literal (nothing when `value` is null, undefined or empty). */
  lit(predicate: string, value: string | number | boolean | null | undefined, datatype?: string) {
    if (value === null || value === undefined || value === '') return this;
    // Characters XML 1.0 cannot hold go from every serialisation alike, so all three agree.
    // Most text holds none: looked for first (one pass, no lookaround), removed only if found.
    const text = String(value);
    const term: LiteralTerm = {
      value: MAYBE_NOT_XML.test(text) ? text.replace(NOT_XML, '') : text,
    };
    if (datatype !== undefined && datatype !== XSD_STRING) term.datatype = datatype;
    this.add(predicate, term);
    return this;
  }

  private add(predicate: string, term: Term) {
    if (this.isFrozen) throw new Error(`${this.id} is shared: it cannot be added to`);
    const objects = this.statements.get(predicate);
    if (objects === undefined) {
      this.statements.set(predicate, [term]);
      return;
    }
    if (objects.length < LONG_LIST) {
      for (const o of objects) if (sameTerm(o, term)) return;
      objects.push(term);
      return;
    }
    // A long list (a page's 1,000 dcat:dataset): compared one by one, each addition would cost
    // the list's length.
    this.keys ??= new Map();
    let keys = this.keys.get(predicate);
    if (keys === undefined) this.keys.set(predicate, (keys = new Set(objects.map(termKey))));
    const key = termKey(term);
    if (!keys.has(key)) {
      keys.add(key);
      objects.push(term);
    }
  }
}

/** Lists at least this long are checked for duplicates by a set of keys. */
const LONG_LIST = 16;

const termKey = (term: Term) =>
  isIri(term) ? `<${term.iri}` : `"${term.datatype ?? ''}"${term.value}`;

export const isIri = (term: Term): term is IriTerm => 'iri' in term;

const sameTerm = (a: Term, b: Term) =>
  isIri(a)
    ? isIri(b) && a.iri === b.iri
    : !isIri(b) && a.value === b.value && a.datatype === b.datatype;

/** A local name that Turtle and RDF/XML both accept after a prefix (a safe subset of NCName). */
const SAFE_LOCAL = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Where the local name of `value` starts: after its last '/' or '#' (0 without either). */
const localStart = (value: string) => Math.max(value.lastIndexOf('/'), value.lastIndexOf('#')) + 1;

/** `[prefix, local]` when `value` is in a known namespace with a plain local name. */
export function splitIri(value: string): [Prefix, string] | undefined {
  // Every namespace ends with '/' or '#' and a safe local name holds neither: the namespace is
  // what precedes the last of them. The namespaces of that length are compared in place: most
  // IRIs written are the catalog's own, in none, and cut out and hashed they would be garbage.
  const end = localStart(value);
  const candidates = NAMESPACES_BY_LENGTH.get(end);
  if (candidates === undefined) return undefined;
  for (const [ns, prefix] of candidates) {
    if (!value.startsWith(ns)) continue;
    const local = value.slice(end);
    return SAFE_LOCAL.test(local) ? [prefix, local] : undefined;
  }
  return undefined;
}

const NAMESPACES_BY_LENGTH = new Map<number, [string, Prefix][]>();
for (const [prefix, ns] of Object.entries(NS) as [Prefix, string][]) {
  const same = NAMESPACES_BY_LENGTH.get(ns.length) ?? [];
  same.push([ns, prefix]);
  NAMESPACES_BY_LENGTH.set(ns.length, same);
}
