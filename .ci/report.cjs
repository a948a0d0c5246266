// Reads vitest's JSON results for .ci/run.
// `counts FILE`: "passed failed skipped" on one line, then each failed test by name with the first
// line of its message (the end of a long log says which tests failed, not only how many).
// `slowest FILE...`: the ten slowest test files over every run, with their seconds.
const fs = require('fs');
const [command, ...files] = process.argv.slice(2);
const read = (file) => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined);
const relative = (name) => name.replace(process.cwd() + '/', '');

if (command === 'counts') {
  const r = read(files[0]);
  if (!r) {
    console.log('0 0 0');
    process.exit(0);
  }
  console.log(r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests);
  const firstLine = (text) => (text ?? '').split('\n')[0].slice(0, 300);
  for (const suite of r.testResults) {
    const failed = suite.assertionResults.filter((t) => t.status === 'failed');
    for (const test of failed) console.log(`  failed: ${relative(suite.name)} > ${test.fullName}: ${firstLine(test.failureMessages[0])}`);
    if (suite.status === 'failed' && failed.length === 0) console.log(`  failed: ${relative(suite.name)}: ${firstLine(suite.message)}`);
  }
} else if (command === 'slowest') {
  const runs = files.flatMap((file) => {
    const r = read(file);
    return r
      ? r.testResults.map((suite) => ({
          file: relative(suite.name),
          node: file.match(/results-(v\d+(?:\.\d+)*)\.json/)?.[1],
          s: (suite.endTime - suite.startTime) / 1000,
        }))
      : [];
  });
  for (const run of runs.sort((a, b) => b.s - a.s).slice(0, 10)) console.log(`  ${run.s.toFixed(1).padStart(6)} s  ${run.file} (${run.node})`);
}
