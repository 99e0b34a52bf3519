import { PathTable } from '../../common/path-table';
import { StoredColumns, StoredObjects, StoredObjectTable } from './s3-staging-area';

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

describe("StoredColumns by the plan's sizes", () => {
  const md5 = 'd41d8cd98f00b204e9800998ecf8427e';

  it('holds no size while every object has its planned one, then a column from the plan', () => {
    const planned = { size: Float64Array.from([10, 20, 30, 40]) };
    const columns = new StoredColumns(4, planned);
    expect(columns.bytes).toBe(4 * 18);
    columns.set(0, 10, md5);
    columns.set(1, 20, `${md5}-2`);
    expect(columns.bytes).toBe(4 * 18);
    expect([columns.sizeOf(0), columns.sizeOf(1), columns.etagOf(1)]).toEqual([10, 20, `${md5}-2`]);
    columns.set(2, 33, md5); // not its planned size (archive mode's body, a file that changed)
    expect(columns.bytes).toBe(4 * 26);
    columns.set(3, 40, md5);
    expect([0, 1, 2, 3].map((i) => columns.sizeOf(i))).toEqual([10, 20, 33, 40]);
    expect(() => columns.grow(8)).toThrow();
  });

  it('keeps 26 bytes a row without planned sizes, and grows', () => {
    const columns = new StoredColumns(2);
    columns.set(1, 7, md5);
    columns.grow(4);
    columns.set(3, 9, 'not-a-digest');
    expect(columns.bytes).toBe(4 * 26);
    expect([columns.sizeOf(1), columns.sizeOf(3), columns.etagOf(3), columns.live]).toEqual([
      7,
      9,
      'not-a-digest',
      2,
    ]);
  });
});

describe('StoredObjects', () => {
  const md5 = 'd41d8cd98f00b204e9800998ecf8427e';
  const names = (objects: StoredObjects) => {
    const sorted = objects.sorted();
    return Array.from({ length: sorted.count }, (_, k) => sorted.name(k));
  };

  it("holds an expected path's object by its row there, any other in the side table", () => {
    const plan = new PathTable();
    for (const path of ['b/2.dat', 'b/1.dat', 'd/x', 'a']) plan.add(path);
    const objects = new StoredObjects();
    objects.set('b/1.dat', 1, md5); // before expect: in the side table for good
    objects.expect(plan);
    objects.set('b/2.dat', 2, `${md5}-2`);
    objects.set('d/x', 3, 'server-own');
    objects.set('.provisioner/manifest.tsv', 4, md5);
    objects.set('b/1.dat', 5, md5);
    expect(objects.refOf('a')).toBe(-1);
    expect(objects.refOf('b/2.dat')).toBe(plan.indexOf('b/2.dat'));
    expect(objects.refOf('b/1.dat')).toBeGreaterThanOrEqual(0x80000000);
    const sorted = objects.sorted();
    expect(names(objects)).toEqual(['.provisioner/manifest.tsv', 'b/1.dat', 'b/2.dat', 'd/x']);
    expect([0, 1, 2, 3].map((k) => [sorted.size(k), sorted.etag(k)])).toEqual([
      [4, md5],
      [5, md5],
      [2, `${md5}-2`],
      [3, 'server-own'],
    ]);
    objects.remove(objects.refOf('b/2.dat'));
    objects.remove(objects.refOf('b/1.dat'));
    expect(names(objects)).toEqual(['.provisioner/manifest.tsv', 'd/x']);
    objects.set('b/1.dat', 6, md5);
    expect(objects.sizeOf(objects.refOf('b/1.dat'))).toBe(6);
    expect(() => objects.expect(plan)).toThrow();
  });

  it('merges the two tables in path order, few side objects or many', () => {
    for (const sideEvery of [1, 2, 997]) {
      const plan = new PathTable();
      const objects = new StoredObjects();
      const all: string[] = [];
      for (let i = 0; i < 3000; i++) {
        const path = `d${i % 5}/f-${(i * 7919) % 3000}.dat`;
        if (i % sideEvery === 0) objects.set(`h/${path}`, 1, md5);
        else plan.add(path);
        all.push(i % sideEvery === 0 ? `h/${path}` : path);
      }
      objects.expect(plan);
      for (let i = 0; i < plan.count; i++) objects.set(plan.path(i), 2, md5);
      expect(names(objects)).toEqual([...all].sort());
      // Each position reads the object of its name (side objects by bisection among the rows).
      const sorted = objects.sorted();
      const wrong: number[] = [];
      for (let k = 0; k < sorted.count; k++)
        if (sorted.size(k) !== (sorted.name(k).startsWith('h/') ? 1 : 2)) wrong.push(k);
      expect(wrong).toEqual([]);
    }
  });

  it('places side objects first, between and after the rows, the rows by their planned sizes', () => {
    const plan = Object.assign(new PathTable(), { size: new Float64Array(16) });
    for (const path of ['b/1', 'b/3', 'd/5']) {
      plan.size[plan.count] = path.length;
      plan.add(path);
    }
    const objects = new StoredObjects();
    for (const path of ['a', 'b/2', 'c', 'e/6']) objects.set(path, 100, md5);
    objects.expect(plan, plan);
    for (const path of ['b/1', 'b/3', 'd/5']) objects.set(path, path.length, `${md5}-3`);
    expect(objects.expectedBytes).toBe(3 * 18);
    const sorted = objects.sorted();
    expect(
      Array.from({ length: sorted.count }, (_, k) => [sorted.name(k), sorted.size(k)]),
    ).toEqual([
      ['a', 100],
      ['b/1', 3],
      ['b/2', 100],
      ['b/3', 3],
      ['c', 100],
      ['d/5', 3],
      ['e/6', 100],
    ]);
  });
});
