import { createHmac } from 'node:crypto';
import { AccessUrls } from './access-urls';

const KEY = 'k'.repeat(40);
const NEXT = 'n'.repeat(40);
const OLD = 'o'.repeat(40);
const NOW = 1_800_000_000;
const OBJECT = 'P~S~D~0123456789abcdef0123';

describe('AccessUrls', () => {
  const urls = new AccessUrls({ signing: KEY }, 300);

  it('reads back the object, the subject and the expiry of a token it issued', () => {
    expect(urls.read(urls.issue(OBJECT, 'sub-1', NOW), NOW + 10)).toEqual({
      object: OBJECT,
      subject: 'sub-1',
      exp: NOW + 300,
    });
  });

  it('an expired token: expired, at its expiry and after', () => {
    const token = urls.issue(OBJECT, 'sub-1', NOW);
    expect(urls.read(token, NOW + 300)).toBe('expired');
    expect(urls.read(token, NOW + 10_000)).toBe('expired');
  });

  it('a token for another object is not this one: the object is under the MAC', () => {
    const [payload] = urls.issue(OBJECT, 'sub-1', NOW).split('.');
    const [, mac] = urls.issue('P~S~OTHER', 'sub-1', NOW).split('.');
    expect(urls.read(`${payload}.${mac}`, NOW)).toBeUndefined();
    const changed = Buffer.from(
      JSON.stringify({ o: 'P~S~OTHER', s: 'sub-1', e: NOW + 300 }),
    ).toString('base64url');
    expect(urls.read(`${changed}.${urls.issue(OBJECT, 'sub-1', NOW).split('.')[1]}`, NOW)).toBe(
      undefined,
    );
  });

  it('a token another deployment (another key) signed: refused', () => {
    const foreign = new AccessUrls({ signing: 'f'.repeat(40) }, 300).issue(OBJECT, 'sub-1', NOW);
    expect(urls.read(foreign, NOW)).toBeUndefined();
    // Without a configured key each process has its own.
    expect(
      new AccessUrls({}, 300).read(new AccessUrls({}, 300).issue(OBJECT, 's', NOW), NOW),
    ).toBeUndefined();
  });

  it('decodes strictly: nothing appended, inserted or re-spelt is the same token', () => {
    const token = urls.issue(OBJECT, 'sub-1', NOW);
    const [payload, mac] = token.split('.');
    // The last base64url character of a 32-byte MAC carries 2 spare bits: another spelling.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelt = mac.slice(0, -1) + last[last.indexOf(mac.at(-1)!) ^ 1];
    for (const variant of [
      `${token}!`,
      `${token}.`,
      `${token}=`,
      `${token} `,
      `${token}A`,
      `${payload}.${mac.slice(0, 20)}!${mac.slice(20)}`,
      `${payload}=.${mac}`,
      ` ${token}`,
      `${payload}.${respelt}`,
      `${payload}..${mac}`,
      `${payload}.${mac}.${mac}`,
    ]) {
      expect([variant, urls.read(variant, NOW)]).toEqual([variant, undefined]);
    }
    expect(urls.read(token, NOW)).toBeDefined();
  });

  it('refuses a correctly signed payload that is not a grant (a key holder’s mistake, not a crash)', () => {
    const sign = (payload: string) =>
      `${payload}.${createHmac('sha256', KEY).update(payload).digest('base64url')}`;
    for (const body of ['not json at all', '{"o":"x","e":1}', '[1,2,3]', 'null']) {
      expect(urls.read(sign(Buffer.from(body).toString('base64url')), NOW)).toBeUndefined();
    }
  });

  describe('rotation with an overlap', () => {
    it('verifies with the next key before it signs, and with the previous one after', () => {
      const before = new AccessUrls({ signing: KEY }, 300);
      const announcing = new AccessUrls({ signing: KEY, next: NEXT }, 300);
      const rotated = new AccessUrls({ signing: NEXT, previous: KEY }, 300);
      const done = new AccessUrls({ signing: NEXT }, 300);
      // Step 1 replicas read URLs that step 2 replicas issue, and the other way round.
      expect(announcing.read(rotated.issue(OBJECT, 's', NOW), NOW)).toMatchObject({ subject: 's' });
      expect(rotated.read(announcing.issue(OBJECT, 's', NOW), NOW)).toMatchObject({ subject: 's' });
      expect(rotated.read(before.issue(OBJECT, 's', NOW), NOW)).toMatchObject({ subject: 's' });
      // Once the previous key is dropped, its URLs are refused.
      expect(done.read(before.issue(OBJECT, 's', NOW), NOW)).toBeUndefined();
      expect(
        new AccessUrls({ signing: KEY, previous: OLD }, 300).read(
          done.issue(OBJECT, 's', NOW),
          NOW,
        ),
      ).toBeUndefined();
    });
  });
});
