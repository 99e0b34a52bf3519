import { fold } from './import-context';
import type { DatasetInput } from './import-shapes';
import type { ShapeProblem } from './shape-validators';

/**
 * Rules inside one dataset item: declaration titles are unique within it, and its legal bases
 * name declarations of the same item.
 */
export function datasetItemProblems(d: DatasetInput): ShapeProblem[] {
  const problems: ShapeProblem[] = [];
  const titles = new Map<string, number>();
  d.data_declarations?.forEach((dd, i) => {
    const key = fold(dd.title ?? '');
    const first = titles.get(key);
    if (first === undefined) titles.set(key, i);
    else
      problems.push({
        path: `data_declarations[${i}].title`,
        message: `duplicates data_declarations[${first}]`,
      });
  });
  d.legal_bases?.forEach((lb, i) =>
    lb.data_declarations?.forEach((title, j) => {
      const path = `legal_bases[${i}].data_declarations[${j}]`;
      if (d.data_declarations === undefined) {
        problems.push({ path, message: 'needs data_declarations in the same item' });
      } else if (!titles.has(fold(title))) {
        problems.push({ path, message: `no data declaration titled "${title}"` });
      }
    }),
  );
  return problems;
}
