import { PassportMemo } from './passport-memo';

describe('PassportMemo', () => {
  it('answers only while the digest is the same and no visa is due for renewal', () => {
    const memo = new PassportMemo(1000);
    memo.set('a', 'd1', Buffer.from('x.y.z'), 100);
    expect(memo.get('a', 'd1', 99)).toEqual(Buffer.from('x.y.z'));
    expect(memo.get('a', 'd2', 99)).toBeUndefined();
    // A miss forgets the entry: the next read with the old digest misses too.
    expect(memo.get('a', 'd1', 99)).toBeUndefined();
    memo.set('a', 'd1', Buffer.from('x.y.z'), 100);
    expect(memo.get('a', 'd1', 100)).toBeUndefined();
  });

  it('holds at most its bytes, dropping the least recently used first', () => {
    const memo = new PassportMemo(60);
    const visas = Buffer.from('v'.repeat(20));
    memo.set('a', 'd', visas, Infinity);
    memo.set('b', 'd', visas, Infinity);
    expect(memo.get('a', 'd', 0)).toEqual(visas);
    // 'b' is now the least recently used; 'c' does not fit beside both.
    memo.set('c', 'd', visas, Infinity);
    expect(memo.get('b', 'd', 0)).toBeUndefined();
    expect(memo.get('a', 'd', 0)).toEqual(visas);
    expect(memo.get('c', 'd', 0)).toEqual(visas);
    // A passport larger than the whole memo is not kept.
    memo.set('big', 'd', Buffer.from('v'.repeat(100)), Infinity);
    expect(memo.get('big', 'd', 0)).toBeUndefined();
    expect(memo.get('a', 'd', 0)).toEqual(visas);
  });
});
