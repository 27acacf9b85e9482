// The durable JSON of queued work (src/durable/work.ts): each column reads back what this version
// writes, reads what earlier versions wrote (fields added since were optional), and refuses a damaged
// row with one short error that names the table, column and row, never the value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from 'typebox';
import { codec, DurableJsonError } from '../../src/durable/codec.js';
import {
  jobOptions,
  jobSource,
  manifestKeys,
  objectTouched,
  objectWork,
  planCounts,
  planEntryWork,
  planGiven,
  planRequest,
  transferSpec,
} from '../../src/durable/work.js';
import { PLANNED_CREATED } from '../../src/engine/backup.js';
import type { ObjectWork, TransferSpec } from '../../src/lifecycle/specs.js';

const ROW = '0193a8f0-0000-7000-8000-000000000001';
const ref = (path: string) => ({ location_id: 'loc-1', path });

/** The refusal of `text` in `codec`'s column for ROW: its message, checked to be a DurableJsonError. */
function refusal(c: { decode(text: string, row: string): unknown }, text: string, row = ROW): string {
  try {
    c.decode(text, row);
  } catch (err) {
    assert.ok(err instanceof DurableJsonError, `a DurableJsonError, not ${String(err)}`);
    return err.message;
  }
  assert.fail(`${text} was read`);
}

test('a transfer spec as this version writes it reads back the same', () => {
  const specs: TransferSpec[] = [
    { kind: 'copy', source: ref('a/x'), destination: ref('b/x') },
    {
      kind: 'move',
      sources: [{ ...ref('a/*'), literal: true }],
      destination: { ...ref('b/'), folder: true },
      filter: { include: ['*.txt'], modified_after: 1_700_000_000_000 },
      backup: ref('keep/t1/'),
      backup_to: 'S3/keep',
    },
    { kind: 'remove', paths: [ref('a/x'), ref('a/y')] },
    { kind: 'pull', urls: ['https://example.com/a'], destination: { ...ref('b/'), folder: true } },
  ];
  for (const spec of specs) assert.deepEqual(transferSpec.decode(transferSpec.encode(spec), ROW), spec);
});

test('a spec and a job object queued before literal, filters and backups (the first release) are read', () => {
  // As 7a893cc and f4fd698 wrote them: no literal, no filter, no backup on move, remove and their work.
  const move =
    '{"kind":"move","sources":[{"location_id":"l","path":"a/*"}],"destination":{"location_id":"l","path":"b/","folder":true}}';
  assert.equal(transferSpec.decode(move, ROW).kind, 'move');
  const remove = '{"op":"remove","source":{"location_id":"l","path":"a/x"}}';
  assert.deepEqual(objectWork.decode(remove, `${ROW}/0`), {
    op: 'remove',
    source: { location_id: 'l', path: 'a/x' },
  });
  // A job queued before sync had options (2026-11-28-sync): none, read as {} by its reader; and the
  // options of a sync before backup_to.
  assert.deepEqual(jobOptions.decode('{"compare":"size","delete":true}', ROW), {
    compare: 'size',
    delete: true,
  });
});

test('a damaged spec is refused naming the table, column and row and the place, never the value', () => {
  assert.equal(
    refusal(transferSpec, '{"kind": "remove", "paths": ['),
    `transfers.spec of row ${ROW} is not JSON this version of ferry reads: not JSON`,
  );
  const secretish = '{"kind":"remove","paths":[{"location_id":"loc-1","path":7}],"note":"private/path"}';
  const message = refusal(transferSpec, secretish);
  assert.equal(
    message,
    `transfers.spec of row ${ROW} is not JSON this version of ferry reads: /paths/0/path: must be string`,
  );
  assert.doesNotMatch(message, /private|loc-1/, 'no contents');
  assert.ok(message.length < 200, message);
  assert.match(refusal(transferSpec, '{"kind":"teleport"}'), /^transfers\.spec of row /);
  assert.match(refusal(transferSpec, 'null'), /^transfers\.spec of row /);
});

test('job object work: every op reads back; damaged work is refused by job and seq', () => {
  const touched = {
    did: 'replaced' as const,
    target: ref('b/x'),
    backup: ref('keep/x'),
    etag: '"e"',
    size: 3,
  };
  const works: ObjectWork[] = [
    { op: 'move', source: ref('a/x'), destination: ref('b/x'), backup: ref('keep/x') },
    { op: 'remove', source: ref('a/x') },
    { op: 'pull', url: 'https://example.com/a', destination: { ...ref('b/'), folder: true } },
    { op: 'delete', target: ref('b/y') },
    { op: 'verify', source: ref('a/x'), destination: ref('b/x'), mode: 'checksum' },
    { op: 'unwrite', touched: { did: 'created', target: ref('b/x'), etag: '"e"' } },
    { op: 'restore', touched },
  ];
  for (const work of works) assert.deepEqual(objectWork.decode(objectWork.encode(work), `${ROW}/1`), work);
  assert.equal(
    refusal(objectWork, '{"op":', `${ROW}/4`),
    `job_objects.work of row ${ROW}/4 is not JSON this version of ferry reads: not JSON`,
  );
  assert.match(
    refusal(
      objectWork,
      '{"op":"verify","source":{"location_id":"l","path":"a"},"destination":{"location_id":"l","path":"b"},"mode":"psychic"}',
    ),
    /^job_objects\.work of row /,
  );
  assert.match(refusal(planEntryWork, '[]', 'plan-1/3'), /^plan_entries\.work of row plan-1\/3 /);
});

test("job object touched: what a work did, and the planner's creation that has no target yet", () => {
  const moved = {
    did: 'moved' as const,
    target: ref('b/x'),
    source: ref('a/x'),
    replacedLost: true as const,
  };
  assert.deepEqual(objectTouched.decode(objectTouched.encode(moved), `${ROW}/0`), moved);
  const planned = objectTouched.decode(PLANNED_CREATED, `${ROW}/0`);
  assert.deepEqual(planned, { did: 'created' });
  assert.equal(planned.target, undefined);
  // A replacement must say where: without a target it is neither shape.
  assert.match(
    refusal(objectTouched, '{"did":"replaced"}', `${ROW}/2`),
    new RegExp(`^job_objects\\.touched of row ${ROW}/2 is not JSON this version of ferry reads: /`),
  );
  assert.match(
    refusal(objectTouched, '{"did":"vanished","target":{"location_id":"l","path":"x"}}'),
    /^job_objects\.touched of row /,
  );
});

test('jobs, manifests and plans: each column reads what is written and refuses what is not its shape', () => {
  assert.deepEqual(jobSource.decode('{"location_id":"l","path":"a/"}', ROW), {
    location_id: 'l',
    path: 'a/',
  });
  assert.equal(
    refusal(jobSource, '{"location_id":'),
    `jobs.source of row ${ROW} is not JSON this version of ferry reads: not JSON`,
  );
  assert.deepEqual(manifestKeys.decode(manifestKeys.encode(['a', 'b/c']), ROW), ['a', 'b/c']);
  assert.match(refusal(manifestKeys, '["a", 1]'), /^job_manifests\.keys of row .*: \/1: /);
  const request = {
    kind: 'sync' as const,
    source: ref('a/'),
    destination: ref('b/'),
    options: { compare: 'checksum' as const, delete: true, max_delete: 10 },
  };
  assert.deepEqual(planRequest.decode(planRequest.encode(request), ROW), request);
  assert.deepEqual(planGiven.decode('{"from":["S3/a/*"],"to":"S3/b/"}', ROW), {
    from: ['S3/a/*'],
    to: 'S3/b/',
  });
  assert.deepEqual(planCounts.decode('{"copy":2,"skip":1}', ROW), { copy: 2, skip: 1 });
  assert.match(refusal(planCounts, '{"copy":"two"}'), /^plans\.counts of row .*: \/copy: /);
});

test('a codec reads an earlier shape through its upgrade, and refuses by the current shape', () => {
  const names = codec('things', 'names', Type.Object({ names: Type.Array(Type.String()) }), [
    {
      schema: Type.Object({ name: Type.String() }),
      upgrade: (v) => ({ names: [(v as { name: string }).name] }),
    },
  ]);
  assert.deepEqual(names.decode('{"names":["a"]}', '1'), { names: ['a'] });
  assert.deepEqual(names.decode('{"name":"a"}', '1'), { names: ['a'] });
  assert.match(
    refusal(names, '{"nom":"a"}', '1'),
    /^things\.names of row 1 is not JSON this version of ferry reads: \/: /,
  );
});
