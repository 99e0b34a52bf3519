import type { BenchContext } from '../lib/context';
import type { SuiteReport } from '../lib/report';

export async function importsBench(_ctx: BenchContext): Promise<SuiteReport> {
  throw new Error('not written yet');
}
