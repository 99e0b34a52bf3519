import { recordRequestOf } from './fdp.controller';

/**
 * Which URLs the fast path may derive a record's tag for: exactly those the FDP's routes read as
 * that record, and nothing the framework might read otherwise (issue 58, item 5).
 */
describe('recordRequestOf', () => {
  it('reads the record routes as the controller does', () => {
    expect(recordRequestOf('/fdp')).toEqual({ target: { kind: 'root' }, route: '/fdp' });
    expect(recordRequestOf('/fdp?format=jsonld')).toEqual({
      target: { kind: 'root' },
      format: 'jsonld',
      route: '/fdp',
    });
    expect(recordRequestOf('/fdp/catalog')?.target).toEqual({ kind: 'catalog', page: 1 });
    expect(recordRequestOf('/fdp/catalog?page=7&format=ttl')).toEqual({
      target: { kind: 'catalog', page: 7 },
      format: 'ttl',
      route: '/fdp/catalog',
    });
    expect(recordRequestOf('/fdp/dataset/ELU_I_12')).toEqual({
      target: { kind: 'dataset', accession: 'ELU_I_12' },
      route: '/fdp/dataset/:accession',
    });
    // Path parts are decoded, as Express hands them to the route.
    expect(recordRequestOf('/fdp/distribution/ELU%5FI_12/storage-3')).toEqual({
      target: { kind: 'distribution', accession: 'ELU_I_12', key: 'storage-3' },
      route: '/fdp/distribution/:accession/:key',
    });
  });

  it.each([
    '/fdp/',
    '/FDP',
    '/fdp/catalog/',
    '/fdp/catalog?page=0',
    '/fdp/catalog?page=01',
    '/fdp/catalog?page=2147483648',
    '/fdp/catalog?page=1&page=2',
    '/fdp/catalog?',
    '/fdp/dataset/ELU_I_1?page=2',
    '/fdp/dataset/ELU_I_1?format=rdf',
    '/fdp/dataset/ELU_I_1?API_KEY=secret',
    '/fdp/dataset/ELU_I_1?api%5Fkey=secret',
    '/fdp/dataset/ELU_I_1?utm=1',
    '/fdp/dataset/',
    '/fdp/dataset/%E0%A4%A',
    `/fdp/dataset/${'x'.repeat(21)}`,
    '/fdp/dataset/a/b',
    `/fdp/distribution/ELU_I_1/${'k'.repeat(41)}`,
    '/fdp/distribution/ELU_I_1',
    '/fdp/profile/dataset',
    '/fdp/profile/dataset/shacl',
    'http://catalog.example/fdp',
    '/api/fdp',
  ])('leaves %s to the framework', (url) => {
    expect(recordRequestOf(url)).toBeUndefined();
  });
});
