// The lifecycle modules (src/lifecycle/) are the one home of the state of transfers, jobs and job
// objects, plans, sends, webhook endpoints and messages, and location health: no other source file
// writes those rows (for locations: their status and refresh columns), and docs/engine.md draws
// exactly the moves the code has (its tables and its state diagrams). Both fail when someone adds a
// write elsewhere or a move without its drawing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { JOB_MOVES } from '../../src/lifecycle/jobs.js';
import { LOCATION_MOVES } from '../../src/lifecycle/location-health.js';
import { OBJECT_MOVES } from '../../src/lifecycle/objects.js';
import { SEND_MOVES } from '../../src/lifecycle/sends.js';
import { TRANSFER_MOVES } from '../../src/lifecycle/transfers.js';
import { WEBHOOK_MESSAGE_MOVES, WEBHOOK_MOVES } from '../../src/lifecycle/webhooks.js';
import type { Move } from '../../src/queue/moves.js';
import {
  hasFinished,
  JOB_ACTIVE,
  JOB_FINISHED,
  JOB_STATES,
  TRANSFER_FINISHED,
  TRANSFER_STATES,
} from '../../src/states.js';

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
  ['Sends', SEND_MOVES],
  ['Webhook endpoints', WEBHOOK_MOVES],
  ['Webhook messages', WEBHOOK_MESSAGE_MOVES],
  ['Location health', LOCATION_MOVES],
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

/** The states no move leaves but a retry, which starts the work again: those it ends in. */
function endStates(states: readonly string[], moves: Record<string, Move<string>>): string[] {
  return states.filter((state) =>
    Object.entries(moves).every(([name, move]) => name === 'retry' || !move.from.includes(state)),
  );
}

describe('src/states.ts says which states a job or transfer ends in, as the moves have them', () => {
  test('JOB_FINISHED: the states no move but retry leaves; JOB_ACTIVE: the rest', () => {
    assert.deepEqual([...JOB_FINISHED], endStates(JOB_STATES, JOB_MOVES));
    assert.deepEqual(
      [...JOB_ACTIVE],
      JOB_STATES.filter((s) => !endStates(JOB_STATES, JOB_MOVES).includes(s)),
    );
  });

  test('TRANSFER_FINISHED: the states no move but retry leaves', () => {
    assert.deepEqual([...TRANSFER_FINISHED], endStates(TRANSFER_STATES, TRANSFER_MOVES));
  });

  test('hasFinished answers by kind: a job that is partial has, a transfer that is queued has not', () => {
    assert.equal(hasFinished('job', 'partial'), true);
    assert.equal(hasFinished('job', 'running'), false);
    assert.equal(hasFinished('transfer', 'failed'), true);
    assert.equal(hasFinished('transfer', 'queued'), false);
    assert.equal(hasFinished('transfer', 'partial'), false, 'no transfer state');
  });
});

describe('only src/lifecycle/ writes transfers, jobs, job objects and plans', () => {
  test('no other source file inserts into, updates or deletes from those tables', () => {
    const write =
      /(insertInto|updateTable|deleteFrom)\(\s*'(transfers|jobs|job_objects|plans|plan_entries)'|\b(update|insert\s+into|delete\s+from)\s+(transfers|jobs|job_objects|plans|plan_entries)\b/i;
    const offenders = sourceFiles(join(root, 'src'))
      .filter((file) => !file.includes('/src/lifecycle/') && !file.includes('/src/db/migrations/'))
      .filter((file) => write.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    assert.deepEqual(offenders, []);
  });
});

/** Every source file but the migrations, as [path from the root, text]. */
const sources = sourceFiles(join(root, 'src'))
  .filter((file) => !file.includes('/src/db/migrations/'))
  .map((file) => [relative(root, file), readFileSync(file, 'utf8')] as const);

/** The writes (Kysely or raw SQL) of `tables` in `text`, as written. */
function writesOf(tables: readonly string[], text: string): string[] {
  const names = tables.join('|');
  const write = new RegExp(
    `(insertInto|updateTable|deleteFrom)\\(\\s*'(${names})'|\\b(update|insert\\s+into|delete\\s+from)\\s+(${names})\\b`,
    'gi',
  );
  return [...text.matchAll(write)].map((m) => m[0]);
}

/** The statement a write begins: from it to its execute, at most 800 characters. */
function statementsOf(tables: readonly string[], text: string): string[] {
  const names = tables.join('|');
  const write = new RegExp(
    `(insertInto|updateTable)\\(\\s*'(${names})'\\s*\\)|\\b(update|insert\\s+into)\\s+(${names})\\b`,
    'gi',
  );
  return [...text.matchAll(write)].map((m) => {
    const end = text.indexOf('execute', m.index);
    return text.slice(m.index, end < 0 ? m.index + 800 : Math.min(end, m.index + 800));
  });
}

describe('each other lifecycle has one home of its own in src/lifecycle/', () => {
  const HOMES: Array<[string, readonly string[]]> = [
    ['src/lifecycle/sends.ts', ['sends']],
    ['src/lifecycle/webhooks.ts', ['webhooks', 'webhook_messages', 'webhook_attempts']],
  ];
  for (const [home, tables] of HOMES) {
    test(`only ${home} writes ${tables.join(', ')}`, () => {
      assert.ok(writesOf(tables, sources.find(([file]) => file === home)?.[1] ?? '').length > 0, home);
      const offenders = sources
        .filter(([file]) => file !== home)
        .flatMap(([file, text]) =>
          writesOf(tables, text)
            // emit queues an event's messages in the transaction of the move it reports (the queue move).
            .filter((w) => !(file.endsWith('/outbox.ts') && /^insert\s+into\s+webhook_messages$/i.test(w)))
            .map((w) => `${file}: ${w}`),
        );
      assert.deepEqual(offenders, []);
    });
  }

  test("emit's insert queues messages in the state of WEBHOOK_MESSAGE_MOVES.queue", () => {
    const [, outbox] = sources.find(([file]) => file.endsWith('/outbox.ts')) ?? ['', ''];
    const insert = statementsOf(['webhook_messages'], outbox);
    assert.equal(insert.length, 1);
    assert.match(insert[0] ?? '', new RegExp(`'${WEBHOOK_MESSAGE_MOVES.queue.to[0]}'`));
  });

  test('only src/lifecycle/location-health.ts writes the status, refresh and lease columns of locations', () => {
    const health =
      /\b(status|validation_error|failure_reason|last_refresh_error|consecutive_refresh_failures|last_refresh_attempt_at|refresh_requested|refresh_after|refresh_lease_owner|refresh_lease_expires_at)\b/;
    const home = 'src/lifecycle/location-health.ts';
    assert.ok(
      statementsOf(['locations'], sources.find(([file]) => file === home)?.[1] ?? '').some((w) =>
        health.test(w),
      ),
    );
    const offenders = sources
      .filter(([file]) => file !== home)
      .flatMap(([file, text]) =>
        statementsOf(['locations'], text)
          .filter((statement) => health.test(statement))
          .map((statement) => `${file}: ${statement.split('\n')[0]}`),
      );
    assert.deepEqual(offenders, []);
  });
});
