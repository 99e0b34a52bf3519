import { DcatExporter } from './dcat.exporter';
import { iri, plainBase, RdfNode } from './rdf-graph';
import { jsonLdWriter, turtleWriter } from './rdf-writers';

/**
 * The JSON-LD writer builds its text directly (no object per subject to stringify): it must
 * write exactly what JSON.stringify of that object wrote before, escapes and key order included.
 */
function stringified(nodes: RdfNode[]): string {
  return nodes
    .map((node) => {
      const object: Record<string, unknown> = { '@id': node.id };
      for (const [predicate, objects] of node.statements)
        object[predicate === iri('rdf', 'type') ? '@type' : predicate] = objects.map((o) =>
          predicate === iri('rdf', 'type')
            ? (o as { iri: string }).iri
            : 'iri' in o
              ? { '@id': o.iri }
              : o.datatype === undefined
                ? { '@value': o.value }
                : { '@value': o.value, '@type': o.datatype },
        );
      return JSON.stringify(object);
    })
    .join(',');
}

const awkward = 'quote " backslash \\ tab \t line\nreturn\r é 𝄞 </script> \u2028 end';

function graph(): RdfNode[] {
  const dataset = new RdfNode('https://catalog.example/api/dcat/datasets/D"1', [
    iri('dcat', 'Dataset'),
    iri('dcat', 'Resource'),
  ])
    .lit(iri('dct', 'title'), awkward)
    .lit(iri('dct', 'issued'), '2026-01-02T03:04:05Z', iri('xsd', 'dateTime'))
    .lit(iri('dcat', 'keyword'), 'one')
    .lit(iri('dcat', 'keyword'), 'two')
    .ref(iri('dct', 'publisher'), 'https://catalog.example/api/dcat/publisher')
    .lit(iri('healthdcatap', 'hasStructuredData'), false, iri('xsd', 'boolean'));
  const plain = new RdfNode('https://catalog.example/x').ref(iri('dct', 'isPartOf'), dataset.id);
  return [dataset, plain];
}

describe('JSON-LD writer', () => {
  it('writes what JSON.stringify of each subject wrote, across batches', () => {
    const writer = jsonLdWriter('https://catalog.example/api/dcat/context.jsonld');
    const [a, b] = graph();
    const text = writer.start() + writer.nodes([a]) + writer.nodes([b]) + writer.end();
    expect(text).toBe(
      `{"@context":"https://catalog.example/api/dcat/context.jsonld","@graph":[${stringified([a, b])}]}`,
    );
    expect(JSON.parse(text)['@graph'][0][iri('dct', 'title')][0]['@value']).toBe(awkward);
  });

  it('writes an empty batch as nothing', () => {
    const writer = jsonLdWriter('https://catalog.example/c');
    expect(writer.start() + writer.nodes([]) + writer.end()).toBe(
      '{"@context":"https://catalog.example/c","@graph":[]}',
    );
  });
});

describe('literals', () => {
  it('drops the characters XML 1.0 cannot hold and keeps tab, line feed and return', () => {
    const node = new RdfNode('https://catalog.example/x').lit(
      iri('dct', 'title'),
      'a\u0000b\u0008c\u000Bd\u001Fe\uFFFEf\uD800g\uDC00h\t\n\r𝄞',
    );
    expect(node.statements.get(iri('dct', 'title'))).toEqual([{ value: 'abcdefgh\t\n\r𝄞' }]);
  });
});

describe('Turtle writer', () => {
  it('names vocabulary IRIs by prefix and the catalog IRIs in full, the same on every call', () => {
    const node = new RdfNode('https://catalog.example/d')
      .ref(iri('dct', 'accessRights'), iri('dcat', 'Dataset'))
      .ref(iri('dct', 'isPartOf'), 'https://catalog.example/c');
    const writer = turtleWriter();
    const once = writer.nodes([node]);
    expect(once).toBe(
      '<https://catalog.example/d>\n  dct:accessRights dcat:Dataset ;\n' +
        '  dct:isPartOf <https://catalog.example/c> .\n\n',
    );
    expect(writer.nodes([node])).toBe(once);
    expect(turtleWriter().start()).toBe(writer.start());
    expect(writer.start()).toContain('@prefix dcat: <http://www.w3.org/ns/dcat#> .\n');
  });

  it("writes the catalog's own IRIs as built, and the others looked at, the same text", () => {
    const looked = new RdfNode('https://catalog.example/d#x').ref(
      iri('dct', 'isPartOf'),
      'https://catalog.example/c',
    );
    const own = new RdfNode('https://catalog.example/d#x', [], true).ref(
      iri('dct', 'isPartOf'),
      'https://catalog.example/c',
      true,
    );
    expect(turtleWriter().nodes([own])).toBe(turtleWriter().nodes([looked]));
    // Not own: a refused character is escaped, a vocabulary IRI named by prefix.
    const data = new RdfNode('https://catalog.example/d')
      .ref(iri('dct', 'type'), 'https://x.example/a b')
      .ref(iri('dct', 'type'), iri('dcat', 'Dataset'));
    expect(turtleWriter().nodes([data])).toContain(
      'dct:type <https://x.example/a\\u0020b>, dcat:Dataset',
    );
  });

  it('marks IRIs own only under a plain base', () => {
    expect(plainBase('https://catalog.example')).toBe(true);
    expect(plainBase('https://catalog.example/a{b}')).toBe(false);
    expect(plainBase('http://www.w3.org/ns')).toBe(false);
    const exporter = (base: string) =>
      new DcatExporter({ base, publisherName: 'P', applicableLegislation: [] });
    const facts = {
      id: 1,
      accession: 'D 1',
      title: 'T',
      description: null,
      elu_uuid: 'u',
      other_external_id: null,
      modified: '2026-01-01T00:00:00Z',
      issued: null,
      project: null,
      declarations: [],
      legal_bases: [],
      storages: [],
      imports: [],
      custodians: [],
      deprecated_at: null,
      vp_discoverable: false,
    };
    const [ds] = exporter('https://catalog.example').datasetNodes(facts);
    expect(ds.ownId).toBe(true);
    expect(ds.id).toBe('https://catalog.example/api/dcat/datasets/D%201');
    const [refused] = exporter('https://catalog.example/a{b}').datasetNodes(facts);
    expect(refused.ownId).toBe(false);
    expect(turtleWriter().nodes([refused])).toMatch(/^<https:\/\/catalog.example\/a\\u007Bb/i);
  });
});
