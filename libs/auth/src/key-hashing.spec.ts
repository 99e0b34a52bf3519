import { constantTimeEqual, generateApiKey, hashApiKey } from './key-hashing';

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the key (known vectors)', () => {
    expect(hashApiKey('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hashApiKey('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('hashes non-ASCII keys as UTF-8 bytes', () => {
    // SHA-256 of the bytes c3 a9, the UTF-8 encoding of "é"
    expect(hashApiKey('\u00e9')).toBe(
      '4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c',
    );
  });
});

describe('constantTimeEqual', () => {
  it('is true only for identical strings', () => {
    expect(constantTimeEqual('secret-key', 'secret-key')).toBe(true);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('secret-key', 'secret-kez')).toBe(false);
    expect(constantTimeEqual('secret-key', 'Secret-key')).toBe(false);
  });

  it('compares strings of different lengths without throwing', () => {
    expect(constantTimeEqual('short', 'a much longer secret value')).toBe(false);
    expect(constantTimeEqual('', 'x')).toBe(false);
    expect(constantTimeEqual('prefix', 'prefix-and-more')).toBe(false);
  });
});

describe('generateApiKey', () => {
  it('makes 48 characters by default from the 62-symbol URL-safe alphabet', () => {
    const key = generateApiKey();
    expect(key).toHaveLength(48);
    expect(key).toMatch(/^[A-Za-z0-9]+$/);
  });

  it('honours the requested length, down to 16', () => {
    expect(generateApiKey(64)).toHaveLength(64);
    expect(generateApiKey(16)).toHaveLength(16);
  });

  it('makes a different key every time', () => {
    const keys = new Set(Array.from({ length: 50 }, () => generateApiKey(32)));
    expect(keys.size).toBe(50);
  });

  it('uses the whole alphabet over many keys (no stuck or missing symbols)', () => {
    const seen = new Set(generateApiKey(4000));
    expect(seen.size).toBe(62);
  });

  it('refuses lengths under 16 and non-integers', () => {
    expect(() => generateApiKey(15)).toThrow(RangeError);
    expect(() => generateApiKey(0)).toThrow('key length must be >= 16');
    expect(() => generateApiKey(16.5)).toThrow(RangeError);
    expect(() => generateApiKey(Number.NaN)).toThrow(RangeError);
  });
});
