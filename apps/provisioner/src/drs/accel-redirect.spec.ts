import { accelRedirectTarget } from './accel-redirect';

describe('accelRedirectTarget', () => {
  it('joins the prefix and the storage path, each segment encoded', () => {
    expect(accelRedirectTarget('/_drs_internal/', 'ds-1/raw/a b%#?.txt')).toBe(
      '/_drs_internal/ds-1/raw/a%20b%25%23%3F.txt',
    );
  });

  it('encodes unicode as UTF-8 and keeps the slashes between segments', () => {
    expect(accelRedirectTarget('/_drs_internal', 'ds/Ångström/ß.fq')).toBe(
      '/_drs_internal/ds/%C3%85ngstr%C3%B6m/%C3%9F.fq',
    );
  });

  it('refuses segments that nginx would normalise out of the dataset', () => {
    for (const path of ['ds/../etc/passwd', './ds/a', 'ds//a', '/ds/a', 'ds/a/', 'ds/a\0b']) {
      expect(() => accelRedirectTarget('/_drs_internal/', path)).toThrow(/cannot|Not a storage/);
    }
  });

  it('encodes a segment that only looks like a traversal once decoded', () => {
    expect(accelRedirectTarget('/p/', 'ds/%2e%2e/x')).toBe('/p/ds/%252e%252e/x');
  });
});
