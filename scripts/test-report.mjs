// A reporter for node's test runner, beside the spec reporter, for scripts/test.mjs: it writes what
// happened in one test file as JSON lines to FERRY_TEST_REPORT_FILE, each line as it happens (so a file
// stopped at its time limit still says which tests had started and not ended):
//   {"start": NAME}                       a test or suite began to run
//   {"end": NAME}                         it ended
//   {"test": R}                           one test (not a suite) reported: R is pass, fail, skip or todo
//   {"failure": TEXT}                     a failed test: the file, its name, the first lines of its error
// scripts/test.mjs reads the lines back for the counts, the failures it lists at the end of the run, and
// the names of the tests a stopped file was in.
import { appendFileSync } from 'node:fs';

const MAX_ERROR_LINES = 6;
const out = process.env.FERRY_TEST_REPORT_FILE;

function write(record) {
  if (out) appendFileSync(out, `${JSON.stringify(record)}\n`);
}

function errorLines(error) {
  if (!error) return [];
  // A failure inside a test arrives wrapped: the runner's own error (code ERR_TEST_FAILURE) holds the
  // test's error as its cause.
  const inner = error.cause ?? error;
  const text = inner?.stack ?? inner?.message ?? String(inner);
  const lines = String(text).split('\n').slice(0, MAX_ERROR_LINES);
  // What a wrapped error was caused by ("fetch failed" by "other side closed"), one line each.
  let cause = inner?.cause;
  for (let depth = 0; cause && depth < 3; depth++, cause = cause.cause) {
    lines.push(`caused by: ${String(cause.message ?? cause).split('\n')[0]}`);
  }
  return lines;
}

function nameOf(data) {
  return `${'  '.repeat(data.nesting ?? 0)}${data.name}`;
}

/** The runner's own test for the file (nesting 0, named by its path): not one of the file's tests. */
function fileItself(data) {
  return (
    data.nesting === 0 &&
    typeof data.file === 'string' &&
    (data.file === data.name || data.file.endsWith(`/${data.name}`))
  );
}

export default async function* report(source) {
  for await (const event of source) {
    const { type, data } = event;
    // dequeue: the test begins to run; complete: it has ended (pass and fail come in the order tests
    // are reported, which can be long after).
    if (type === 'test:dequeue' && !fileItself(data)) write({ start: nameOf(data) });
    if (type === 'test:complete' && !fileItself(data)) write({ end: nameOf(data) });
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    const result =
      data.skip !== undefined && data.skip !== false ? 'skip' : data.todo ? 'todo' : type.slice(5);
    if (data.details?.type !== 'suite' && !fileItself(data)) write({ test: result });
    const error = data.details?.error;
    // A suite fails when one of its tests does: that test has its own line already. The file's own test
    // fails alone when the file could not be loaded or ended badly: its error says why.
    if (type === 'test:fail' && error?.failureType !== 'subtestsFailed') {
      const where = data.file ? data.file.replace(`${process.cwd()}/`, '') : '(unknown file)';
      const lines = errorLines(error).map((line) => `    ${line}`);
      write({ failure: `✖ ${where} › ${data.name}\n${lines.join('\n')}` });
    }
  }
}
