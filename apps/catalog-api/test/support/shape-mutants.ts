import { DataFactory, type Quad, type Quad_Object } from 'n3';

/**
 * "The shapes bite": from a graph that conforms to a shapes graph, copies of its nodes that
 * each break one constraint of one property shape, with the violation each must yield.
 *
 * For every node shape with an `sh:targetClass`, one node of that class is taken; for each of
 * the shape's property shapes (a plain predicate path) a copy of the node (`<node>-mutant-<n>`,
 * every triple copied) either drops the property (sh:minCount), gets one value too many
 * (sh:maxCount), or has a value of the wrong datatype (sh:datatype), node kind (sh:nodeKind),
 * class (sh:class) or shape (sh:node). Only SHACL core, only what the shapes say: no reading of
 * what they mean.
 */

const SH = 'http://www.w3.org/ns/shacl#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const { namedNode, literal, quad } = DataFactory;

export interface Expectation {
  path: string;
  component: string;
  what: string;
}

/** A literal of `datatype` different from `like` (dates and numbers stay valid of their type). */
function otherValue(datatype: string, n: number): Quad_Object {
  if (datatype === `${XSD}dateTime`)
    return literal(`2001-01-0${1 + (n % 9)}T00:00:00Z`, namedNode(datatype));
  if (datatype === `${XSD}date`) return literal(`2001-01-0${1 + (n % 9)}`, namedNode(datatype));
  if (/(integer|decimal|nonNegativeInteger)$/.test(datatype))
    return literal(String(1000 + n), namedNode(datatype));
  if (datatype === `${XSD}boolean`)
    return literal(n % 2 === 0 ? 'true' : 'false', namedNode(datatype));
  return literal(`another value ${n}`, namedNode(datatype));
}

export function shapeMutants(
  shapes: Quad[],
  data: Quad[],
): { quads: Quad[]; expected: Map<string, Expectation> } {
  const of = (s: Quad['subject'] | Quad_Object, p: string) =>
    shapes.filter((q) => q.subject.equals(s) && q.predicate.value === SH + p).map((q) => q.object);
  const one = (s: Quad['subject'] | Quad_Object, p: string) => of(s, p)[0];
  const quads: Quad[] = [];
  const expected = new Map<string, Expectation>();
  let n = 0;

  for (const target of shapes.filter((q) => q.predicate.value === `${SH}targetClass`)) {
    const shape = target.subject;
    const focus = data.find(
      (q) => q.predicate.value === RDF_TYPE && q.object.equals(target.object),
    )?.subject;
    if (focus === undefined) continue;
    const own = data.filter((q) => q.subject.equals(focus));
    for (const property of of(shape, 'property')) {
      const path = one(property, 'path');
      if (path === undefined || path.termType !== 'NamedNode') continue;
      const values = own.filter((q) => q.predicate.equals(path)).map((q) => q.object);
      const mutate = (
        component: string,
        what: string,
        change: (values: Quad_Object[]) => Quad_Object[],
        extra: Quad[] = [],
      ) => {
        const id = namedNode(`${focus.value}-mutant-${++n}`);
        for (const q of own)
          if (!q.predicate.equals(path)) quads.push(quad(id, q.predicate, q.object));
        for (const v of change(values)) quads.push(quad(id, path, v));
        quads.push(...extra);
        expected.set(id.value, {
          path: path.value,
          component,
          what: `${target.object.value} ${path.value}: ${what}`,
        });
      };
      const minCount = Number(one(property, 'minCount')?.value ?? 0);
      const maxCount = one(property, 'maxCount');
      const datatype = one(property, 'datatype');
      const nodeKind = one(property, 'nodeKind')?.value.replace(SH, '');
      const cls = one(property, 'class');
      const node = one(property, 'node');
      if (minCount > 0 && values.length > 0)
        mutate('MinCountConstraintComponent', 'dropped', () => []);
      if (maxCount !== undefined && values.length > 0) {
        const first = values[0];
        // One more value like those there: a literal of the same datatype, or a copy of the node.
        const extraNodes: Quad[] = [];
        let added: Quad_Object;
        if (first.termType === 'Literal') added = otherValue(first.datatype.value, n);
        else {
          added = namedNode(`${first.value}-other-${n}`);
          for (const q of data.filter((d) => d.subject.equals(first)))
            extraNodes.push(quad(added, q.predicate, q.object));
        }
        const extra = Number(maxCount.value) + 1 - values.length;
        mutate(
          'MaxCountConstraintComponent',
          'one value too many',
          (v) => [
            ...v,
            ...Array.from({ length: extra }, (_, i) =>
              i === 0 ? added : otherValue(`${XSD}string`, i),
            ),
          ],
          extraNodes,
        );
      }
      if (datatype !== undefined)
        mutate('DatatypeConstraintComponent', 'wrong datatype', (v) => [
          literal('not of the datatype'),
          ...v.slice(1),
        ]);
      if (nodeKind === 'IRI' || nodeKind === 'BlankNodeOrIRI')
        mutate('NodeKindConstraintComponent', 'a literal', (v) => [
          literal('not an IRI'),
          ...v.slice(1),
        ]);
      if (nodeKind === 'Literal')
        mutate('NodeKindConstraintComponent', 'an IRI', (v) => [
          namedNode('urn:example:not-a-literal'),
          ...v.slice(1),
        ]);
      if (cls !== undefined && values.length > 0)
        mutate('ClassConstraintComponent', 'untyped value', (v) => [
          namedNode('urn:example:untyped'),
          ...v.slice(1),
        ]);
      if (node !== undefined && values.length > 0)
        mutate('NodeConstraintComponent', 'value not of the shape', (v) => [
          namedNode('urn:example:nothing-known'),
          ...v.slice(1),
        ]);
    }
  }
  return { quads, expected };
}
