import { FileBudget } from './file-budget';

describe('FileBudget', () => {
  it('admits what fits at once, queues the rest first come, first served, and frees once', async () => {
    const budget = new FileBudget(100);
    const releaseA = await budget.acquire(60);
    const admitted: string[] = [];
    const b = budget.acquire(50).then((release) => (admitted.push('b'), release));
    // Fits beside A, but must not pass B, which came first.
    const c = budget.acquire(10).then((release) => (admitted.push('c'), release));
    await Promise.resolve();
    expect(admitted).toEqual([]);
    expect(budget.inUse).toBe(60);
    releaseA();
    releaseA();
    const [releaseB, releaseC] = await Promise.all([b, c]);
    expect(admitted).toEqual(['b', 'c']);
    expect(budget.inUse).toBe(60);
    releaseB();
    releaseC();
    expect(budget.inUse).toBe(0);
  });

  it('refuses more than the whole budget: no wait would make room', async () => {
    await expect(new FileBudget(100).acquire(101)).rejects.toThrow('101 files cannot fit');
  });
});
