import { answersHelp } from '@app/platform';
import { sourcesFromSetting } from '../config/sources-setting';
import { createDemoDropzone, DemoDropzoneResult } from './demo-dropzone';

/** The summary `npm start` reads: the last line of the output, with --json. */
export function demoSummaryLine(results: DemoDropzoneResult[]): string {
  const sum = (pick: (r: DemoDropzoneResult) => number) => results.reduce((n, r) => n + pick(r), 0);
  return JSON.stringify({
    demo: { submissions: sum((r) => r.submissions), datasets: sum((r) => r.datasets) },
  });
}

/**
 * Creates the demo drop zone in every configured dropzone source that is still empty
 * (SOURCES unset: the default one under data/dropzone). Only SOURCES is read: no queue, no keys.
 */
const USAGE = `
Usage: demo-dropzone [--json]

Creates the demo drop zone in every dropzone source of SOURCES that is still empty (SOURCES
unset: data/dropzone). --json: the last line is a JSON summary.
`;

function main(): void {
  if (answersHelp(USAGE)) return;
  const { sources, errors } = sourcesFromSetting(process.env.SOURCES);
  if (errors.length > 0) throw new Error(`SOURCES: ${errors.join('; ')}`);
  const results: DemoDropzoneResult[] = [];
  for (const source of sources) {
    if (source.type !== 'dropzone') continue;
    const result = createDemoDropzone(source.root);
    results.push(result);
    console.log(
      result.created
        ? `Demo drop zone created in ${result.root} (source ${source.name}): ${result.submissions} submissions, ${result.datasets} datasets.`
        : `Drop zone ${result.root} (source ${source.name}) already holds submissions; nothing changed.`,
    );
  }
  if (process.argv.includes('--json')) console.log(demoSummaryLine(results));
}

try {
  main();
} catch (error: unknown) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
