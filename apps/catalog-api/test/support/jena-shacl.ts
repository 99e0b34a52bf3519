import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Parser, type Quad } from 'n3';

/**
 * Apache Jena's SHACL engine (Debian's libapache-jena-java 4.5, `shacl.shacl_validate` of
 * jena-cmds), run as the `shacl validate` command would run it: an implementation of SHACL
 * independent of the catalog's code and of shacl-engine. .ci/run installs it.
 *
 * Two Debian quirks (../shared/reference/dcat/README.md, "Running them with Apache Jena"): the
 * class path is the jars Jena needs, never all of /usr/share/java (two SLF4J bindings abort it);
 * and Debian's jena-core moved its shaded Xerces classes to `xerces.*` but left their message
 * bundles under `org/apache/jena/ext/xerces/`, so every XSD datatype fails ("internal error")
 * until the bundles are on the class path under `xerces/`: rebuilt once per machine from the
 * installed jar.
 */

const run = promisify(execFile);
const JAVA = '/usr/share/java';
const JARS = [
  'jena-base',
  'jena-core',
  'jena-iri',
  'jena-arq',
  'jena-shacl',
  'jena-cmds',
  'slf4j-api',
  'slf4j-nop',
  'commons-lang3',
  'commons-io',
  'commons-codec',
  'commons-compress',
  'commons-csv',
  'commons-cli',
  'dexx.collection',
  'guava',
  'gson',
  'jsonld-java',
  'jackson-core',
  'jackson-databind',
  'jackson-annotations',
  'httpclient',
  'httpcore',
  'commons-logging',
  'titanium-json-ld',
  'jakarta.json-api',
  'protobuf',
  'thrift',
];
const SH = 'http://www.w3.org/ns/shacl#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

async function xercesBundles(): Promise<string> {
  const dir = join(tmpdir(), `jena-xerces-resources-${process.getuid?.() ?? 0}`);
  if (existsSync(join(dir, 'xerces'))) return dir;
  const work = mkdtempSync(join(tmpdir(), 'jena-xerces-'));
  await run('unzip', [
    '-q',
    join(JAVA, 'jena-core.jar'),
    'org/apache/jena/ext/xerces/*',
    '-x',
    '*.class',
    '-d',
    work,
  ]);
  mkdirSync(join(work, 'out'));
  renameSync(join(work, 'org/apache/jena/ext/xerces'), join(work, 'out/xerces'));
  try {
    renameSync(join(work, 'out'), dir);
  } catch {
    // Another test file built it meanwhile: theirs is the same.
  }
  rmSync(work, { recursive: true, force: true });
  return dir;
}

export interface ShaclResult {
  focusNode: string;
  path: string | null;
  /** The constraint component's local name: MinCountConstraintComponent, … */
  component: string;
  severity: string;
  message: string;
}

/**
 * Validates the data files against the shapes files (any RDF syntax Jena reads; several files
 * of each are merged first by the test, as `shacl validate` takes one of each).
 */
export async function jenaValidate(shapesFile: string, dataFile: string): Promise<ShaclResult[]> {
  const classPath = [await xercesBundles(), ...JARS.map((j) => join(JAVA, `${j}.jar`))].join(':');
  const { stdout } = await run(
    'java',
    [
      '-Xmx1g',
      '-cp',
      classPath,
      'shacl.shacl_validate',
      '--shapes',
      shapesFile,
      '--data',
      dataFile,
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  const report = new Parser().parse(stdout);
  const value = (s: Quad['subject'], p: string) =>
    report.find((q) => q.subject.equals(s) && q.predicate.value === SH + p)?.object.value ?? null;
  const results = report.filter(
    (q) => q.predicate.value === RDF_TYPE && q.object.value === `${SH}ValidationResult`,
  );
  if (!report.some((q) => q.predicate.value === `${SH}conforms`))
    throw new Error(`Jena wrote no validation report:\n${stdout.slice(0, 2000)}`);
  return results.map(({ subject }) => ({
    focusNode: value(subject, 'focusNode')!,
    path: value(subject, 'resultPath'),
    component: (value(subject, 'sourceConstraintComponent') ?? '').replace(SH, ''),
    severity: (value(subject, 'resultSeverity') ?? '').replace(SH, ''),
    message: value(subject, 'resultMessage') ?? '',
  }));
}
