// A reporter for node's test runner that writes one line per failed test: the file, the test's name and
// the first lines of its error. scripts/test.mjs gives it a file beside the spec reporter and prints that
// file again once every test has run, so a failure is in the last lines of a long log (CI shows only the
// tail) and not somewhere in the middle of 1,500 passing tests.
import { writeFileSync } from 'node:fs';
import { fileTimes } from './test-times.mjs';

const MAX_ERROR_LINES = 6;

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

export default async function* failures(source) {
  const times = fileTimes();
  try {
    for await (const event of source) {
      times.add(event);
      yield* failure(event);
    }
  } finally {
    if (process.env.FERRY_TEST_TIMES_FILE) writeFileSync(process.env.FERRY_TEST_TIMES_FILE, times.render());
  }
}

function* failure(event) {
  if (event.type !== 'test:fail') return;
  const { name, file, details } = event.data;
  const error = details?.error;
  // A suite fails when one of its tests does: that test has its own line already.
  if (error?.failureType === 'subtestsFailed') return;
  const where = file ? `${file.replace(`${process.cwd()}/`, '')}` : '(unknown file)';
  const lines = errorLines(error).map((line) => `    ${line}`);
  yield `✖ ${where} › ${name}\n${lines.join('\n')}\n`;
}
