import { merge } from './dcat.exporter';
import { iri, RdfNode } from './rdf-graph';
import { jsonLdWriter, turtleWriter } from './rdf-writers';

const agent = () =>
  new RdfNode('https://catalog.example/api/dcat/publisher', [iri('foaf', 'Agent')]).lit(
    iri('foaf', 'name'),
    'Example "Institute"',
  );

describe('shared (frozen) RDF nodes', () => {
  it('refuses additions once frozen', () => {
    const shared = agent().freeze();
    expect(() => shared.lit(iri('dct', 'title'), 'more')).toThrow(/shared/);
    expect(() => shared.ref(iri('dct', 'type'), 'https://x.example/t')).toThrow(/shared/);
  });

  it('merges into a copy, leaving the shared node as it was', () => {
    const shared = agent().freeze();
    const more = new RdfNode(shared.id).ref(iri('cv', 'contactPoint'), `${shared.id}#contact`);
    const [merged] = merge([shared, more]);
    expect(merged).not.toBe(shared);
    expect([...merged.statements.keys()]).toEqual([
      iri('rdf', 'type'),
      iri('foaf', 'name'),
      iri('cv', 'contactPoint'),
    ]);
    expect([...shared.statements.keys()]).toEqual([iri('rdf', 'type'), iri('foaf', 'name')]);
    // The same shared node met twice is written once, as itself.
    expect(merge([shared, shared])).toEqual([shared]);
  });

  it('is written as the same node unshared would be, once in each answer', () => {
    const shared = agent().freeze();
    const dataset = new RdfNode('https://catalog.example/api/dcat/datasets/D1', [
      iri('dcat', 'Dataset'),
    ]).ref(iri('dct', 'publisher'), shared.id);
    const other = new RdfNode('https://catalog.example/api/dcat/datasets/D2', [
      iri('dcat', 'Dataset'),
    ]).ref(iri('dct', 'publisher'), shared.id);
    const unshared = turtleWriter();
    const turtle = unshared.nodes([dataset, agent()]);
    const otherTurtle = unshared.nodes([other]);
    // The first time in an answer as the unshared node is written; later in it, not again.
    const answer = turtleWriter();
    expect(answer.nodes([dataset, shared])).toBe(turtle);
    expect(answer.nodes([other, shared])).toBe(otherTurtle);
    // Another answer writes it again.
    expect(turtleWriter().nodes([dataset, shared])).toBe(turtle);
    // An unshared node is written every time.
    expect(unshared.nodes([dataset, agent()])).toBe(turtle);
    const plain = jsonLdWriter('https://catalog.example/context.jsonld');
    const kept = jsonLdWriter('https://catalog.example/context.jsonld');
    const expected = plain.nodes([agent()]) + plain.nodes([dataset]) + plain.nodes([other]);
    expect(kept.nodes([shared]) + kept.nodes([dataset, shared]) + kept.nodes([shared, other])).toBe(
      expected,
    );
    expect(JSON.parse(`[${expected}]`)).toHaveLength(3);
  });
});
