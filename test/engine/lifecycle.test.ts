// The lifecycle modules are the one home of the state of transfers, jobs and job objects: no other
// source file writes those tables, and docs/engine.md draws exactly the moves the code has (its tables
// and its state diagrams). Both fail when someone adds a write elsewhere or a move without its drawing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { JOB_MOVES } from '../../src/engine/lifecycle/jobs.js';
import { OBJECT_MOVES } from '../../src/engine/lifecycle/objects.js';
import { TRANSFER_MOVES } from '../../src/engine/lifecycle/transfers.js';
import type { Move } from '../../src/queue/moves.js';

const root = new URL('../../', import.meta.url).pathname;
const doc = readFileSync(join(root, 'docs/engine.md'), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** The part of docs/engine.md under `### heading`, up to the next heading of that level or above. */
function section(heading: string): string {
  const start = doc.indexOf(`### ${heading}\n`);
  assert.ok(start >= 0, `docs/engine.md has no "### ${heading}"`);
  const rest = doc.slice(start + heading.length + 5);
  const end = rest.search(/^#{1,3} /m);
  return end < 0 ? rest : rest.slice(0, end);
}

const LIFECYCLES: Array<[string, Record<string, Move<string>>]> = [
  ['Transfers', TRANSFER_MOVES],
  ['Jobs', JOB_MOVES],
  ['Job objects', OBJECT_MOVES],
];

describe('docs/engine.md draws the moves the lifecycle modules have', () => {
  for (const [heading, moves] of LIFECYCLES) {
    test(`${heading}: one table row per move, with its states and who makes it`, () => {
      const rows = section(heading)
        .split('\n')
        .filter((line) => line.startsWith('| ') && !line.startsWith('| move') && !line.startsWith('|---'));
      const expected = Object.entries(moves).map(
        ([name, move]) =>
          `| ${name} | ${move.from.length === 0 ? '(new)' : move.from.join(', ')} | ${move.to.join(', ')} | ${move.by} |`,
      );
      assert.deepEqual(rows, expected);
    });

    test(`${heading}: the state diagram has every edge of every move, and no other`, () => {
      const edges = section(heading)
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.includes('-->'))
        .sort();
      const expected = Object.entries(moves)
        .flatMap(([name, move]) =>
          (move.from.length === 0 ? ['[*]'] : move.from).flatMap((from) =>
            move.to.map((to) => `${from} --> ${to}: ${name}`),
          ),
        )
        .sort();
      assert.deepEqual(edges, expected);
    });
  }
});

describe('only src/engine/lifecycle/ writes transfers, jobs and job objects', () => {
  test('no other source file inserts into or updates those tables', () => {
    const write =
      /(insertInto|updateTable|deleteFrom)\(\s*'(transfers|jobs|job_objects)'|\b(update|insert\s+into|delete\s+from)\s+(transfers|jobs|job_objects)\b/i;
    const offenders = sourceFiles(join(root, 'src'))
      .filter((file) => !file.includes('/src/engine/lifecycle/') && !file.includes('/src/db/migrations/'))
      .filter((file) => write.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    assert.deepEqual(offenders, []);
  });
});
