// Ends every run with one plain line, "tests: N passed, N failed", that any CI log reader
// understands, whatever it knows about jest's own summary.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numRuntimeErrorTestSuites } = results;
    const failed = numFailedTests + numRuntimeErrorTestSuites;
    const skipped = numPendingTests > 0 ? `, ${numPendingTests} skipped` : '';
    process.stdout.write(`\ntests: ${numPassedTests} passed, ${failed} failed${skipped}\n`);
  }
}
module.exports = SummaryReporter;
