// docs/cli.md's "A recorded session" is what the commands print today: every command of it is run
// (test/docs/cli-session.ts) and its output compared with the page's, ids, times, ports and speeds
// masked. When the CLI's output changes on purpose, `npm run docs:cli-session` rewrites the section.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { killAll } from '../support/processes.js';
import { comparable, PAGE, parse, record } from './cli-session.js';

after(killAll);

test('every command of the recorded session in docs/cli.md prints what the page shows', async () => {
  const page = readFileSync(PAGE, 'utf8');
  const shown = parse(page).blocks;
  assert.ok(shown.flat().length >= 20, 'the session shows the commands');
  const run = await record(page);
  try {
    const differences: string[] = [];
    run.blocks.flat().forEach((step, i) => {
      const expected = comparable((shown.flat()[i] as { output: string[] }).output);
      const actual = comparable(step.output);
      if (JSON.stringify(expected) !== JSON.stringify(actual)) {
        differences.push(
          `$ ${step.command}\n  page: ${expected.join('\n        ')}\n  now:  ${actual.join('\n        ')}`,
        );
      }
    });
    assert.equal(
      differences.length,
      0,
      `docs/cli.md no longer shows what these print (npm run docs:cli-session rewrites it):\n${differences.join('\n')}`,
    );
  } finally {
    await run.close();
  }
});
