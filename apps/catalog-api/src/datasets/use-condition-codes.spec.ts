import { DUO_IRIS, duoIri, USE_CLASSES } from './use-condition-codes';

describe('consent codes as DUO terms', () => {
  it('maps every GA4GH consent code DUO has to its own term, and IP and Other to none', () => {
    expect(duoIri('GRU')).toBe('http://purl.obolibrary.org/obo/DUO_0000042');
    expect(duoIri('HMB')).toBe('http://purl.obolibrary.org/obo/DUO_0000006');
    expect(duoIri('NRES')).toBe('http://purl.obolibrary.org/obo/DUO_0000004');
    expect(duoIri('IP')).toBeNull();
    expect(duoIri('Other')).toBeNull();
    expect(duoIri('not a code')).toBeNull();
    const mapped = USE_CLASSES.filter((code) => duoIri(code) !== null);
    expect(mapped).toHaveLength(USE_CLASSES.length - 2);
    // No two codes share a term, and the SQL's table is the same mapping.
    expect(new Set(mapped.map(duoIri)).size).toBe(mapped.length);
    expect(DUO_IRIS).toEqual(Object.fromEntries(mapped.map((code) => [code, duoIri(code)])));
  });
});
