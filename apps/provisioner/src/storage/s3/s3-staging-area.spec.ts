import { StoredObjectTable } from './s3-staging-area';

describe('StoredObjectTable', () => {
  const md5 = 'd41d8cd98f00b204e9800998ecf8427e';

  it('holds each ETag form as it was given: an MD5, a multipart digest, anything else as text', () => {
    const table = new StoredObjectTable();
    const a = table.set('a/one.txt', 11, md5);
    const b = table.set('b/two.bin', 3 * 8 * 1024 ** 2, `${md5}-3`);
    const c = table.set('c', 5, 'not-a-digest');
    expect([table.etagOf(a), table.etagOf(b), table.etagOf(c)]).toEqual([
      md5,
      `${md5}-3`,
      'not-a-digest',
    ]);
    expect([table.sizeOf(a), table.sizeOf(b), table.sizeOf(c)]).toEqual([11, 3 * 8 * 1024 ** 2, 5]);
    expect(table.live).toBe(3);
  });

  it('replaces the entry of a path held, and a removed path is absent until set again', () => {
    const table = new StoredObjectTable();
    const row = table.set('x/y.dat', 1, md5);
    expect(table.set('x/y.dat', 2, 'other')).toBe(row);
    expect([table.sizeOf(row), table.etagOf(row), table.live]).toEqual([2, 'other', 1]);
    table.remove(row);
    table.remove(row);
    expect([table.rowOf('x/y.dat'), table.live]).toEqual([-1, 0]);
    expect(table.set('x/y.dat', 3, `${md5}-2`)).toBe(row);
    expect([table.rowOf('x/y.dat'), table.etagOf(row), table.live]).toEqual([row, `${md5}-2`, 1]);
  });

  it('gives the rows held in the order of their paths, grown past its first capacity', () => {
    const table = new StoredObjectTable();
    const paths = Array.from({ length: 5000 }, (_, i) => `d${i % 7}/f-${(i * 7919) % 5000}.dat`);
    for (const path of paths) table.set(path, path.length, md5);
    table.remove(table.rowOf(paths[10]));
    const sorted = Array.from(table.sortedRows(), (row) => table.path(row));
    const expected = [...new Set(paths)].filter((p) => p !== paths[10]).sort();
    expect(sorted).toEqual(expected);
    expect(table.sizeOf(table.rowOf(paths[4999]))).toBe(paths[4999].length);
  });
});
