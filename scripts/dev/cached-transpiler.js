// ts-node's transpiler for this repository (tsconfig.json "ts-node".transpiler): TypeScript's own
// transpile-only output, as ts-node makes it, kept on disk per source file, so a command run
// again compiles only the files changed since (`npm run catalog` spent 4 of its 6 CPU seconds
// compiling the app's ~340 files on every start). The entry for a file is used only when the
// TypeScript version, the compiler options, the file's name and its text all match.
// docs/decisions/cli-start-transpile-cache.md
'use strict';

/* eslint-disable @typescript-eslint/no-require-imports -- ts-node requires its transpiler: CommonJS */
const { createHash, randomBytes } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const CACHE = join(__dirname, '../../node_modules/.cache/ts-node-transpiled');

/** @param {import('ts-node').CreateTranspilerOptions & { nodeModuleEmitKind?: string }} options */
function create(options) {
  const ts = options.service.projectLocalResolveHelper
    ? require(options.service.projectLocalResolveHelper('typescript', true))
    : require('typescript');
  const compilerOptions = options.service.config.options;
  const moduleKind = options.nodeModuleEmitKind === 'nodeesm' ? 'module' : 'commonjs';
  const setting = createHash('sha256')
    .update(`${ts.version}\n${moduleKind}\n${JSON.stringify(compilerOptions)}`)
    .digest('hex');
  let compile;
  try {
    // ts-node's own transpile-only compiler (one reused host: faster than ts.transpileModule).
    const { createTsTranspileModule } = require('ts-node/dist/ts-transpile-module');
    const transpile = createTsTranspileModule(ts, { compilerOptions, reportDiagnostics: true });
    compile = (code, fileName) => transpile(code, { fileName }, moduleKind);
  } catch {
    compile = (code, fileName) =>
      ts.transpileModule(code, { fileName, compilerOptions, reportDiagnostics: true });
  }
  return {
    transpile(code, { fileName }) {
      const key = createHash('sha256').update(`${setting}\n${fileName}\n`).update(code).digest('hex');
      const file = join(CACHE, `${createHash('sha256').update(fileName).digest('hex')}.json`);
      try {
        const kept = JSON.parse(readFileSync(file, 'utf8'));
        if (kept.key === key) return { outputText: kept.outputText, sourceMapText: kept.sourceMapText };
      } catch {
        // Not kept yet, or unreadable: compiled below.
      }
      const result = compile(code, fileName);
      if ((result.diagnostics ?? []).length === 0) {
        try {
          mkdirSync(CACHE, { recursive: true });
          // Written whole, then renamed: a process reading it meanwhile sees the old or the new.
          const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
          writeFileSync(
            temp,
            JSON.stringify({ key, outputText: result.outputText, sourceMapText: result.sourceMapText }),
          );
          renameSync(temp, file);
        } catch {
          // A read-only checkout compiles every time, as without the cache.
        }
      }
      return result;
    },
  };
}

module.exports = { create };
