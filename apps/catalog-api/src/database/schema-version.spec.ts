import { REQUIRED_MIGRATIONS, schemaProblem } from './schema-version';

describe('schemaProblem', () => {
  const required = ['A1', 'B2', 'C3'];

  it('accepts the schema of this release', () => {
    expect(schemaProblem(['A1', 'B2', 'C3'], required)).toBeUndefined();
  });

  it("accepts a newer schema: the next release's migrations keep this one working", () => {
    expect(schemaProblem(['A1', 'B2', 'C3', 'D4'], required)).toBeUndefined();
  });

  it('refuses an older schema, naming what is missing', () => {
    expect(schemaProblem(['A1'], required)).toBe(
      "schema too old: 2 of this release's 3 migrations not applied (B2, C3); the release's migration Job applies them",
    );
  });

  it('refuses an empty database, naming the first migrations only', () => {
    expect(schemaProblem([], ['A', 'B', 'C', 'D', 'E'])).toMatch(
      /^schema too old: 5 of .*\(A, B, C, …\)/,
    );
  });

  it("knows this release's migrations by their names, in order", () => {
    expect(REQUIRED_MIGRATIONS[0]).toBe('CreateTerms1795327223214');
    expect(new Set(REQUIRED_MIGRATIONS).size).toBe(REQUIRED_MIGRATIONS.length);
  });
});
