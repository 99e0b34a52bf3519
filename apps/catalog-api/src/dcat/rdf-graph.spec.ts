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

  it('is written as the same node unshared would be, each time', () => {
    const shared = agent().freeze();
    const dataset = new RdfNode('https://catalog.example/api/dcat/datasets/D1', [
      iri('dcat', 'Dataset'),
    ]).ref(iri('dct', 'publisher'), shared.id);
    const turtle = turtleWriter.nodes([dataset, agent()]);
    expect(turtleWriter.nodes([dataset, shared])).toBe(turtle);
    expect(turtleWriter.nodes([dataset, shared])).toBe(turtle);
    const plain = jsonLdWriter('https://catalog.example/context.jsonld');
    const kept = jsonLdWriter('https://catalog.example/context.jsonld');
    const expected = plain.nodes([agent()]) + plain.nodes([dataset, agent()]);
    expect(kept.nodes([shared]) + kept.nodes([dataset, shared])).toBe(expected);
  });
});
