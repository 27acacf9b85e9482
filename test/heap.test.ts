// The heap growth limit `ferry serve` sets (src/heap.ts): applied unless the operator gave node one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { limitHeapGrowth } from '../src/heap.js';

test('an operator who started node with --heap-growing-percent keeps their value', () => {
  assert.equal(limitHeapGrowth(['--heap-growing-percent=30']), false);
  assert.equal(limitHeapGrowth(['--inspect', '--heap_growing_percent=30']), false);
});

test('the limit keeps the heap of a process that drops many objects near what it holds', () => {
  // The same allocation pattern (batches that live a while, then die: what a bulk transfer does) in
  // two processes, with and without the limit: V8's own factor lets the heap grow far further.
  const script = `
    const limit = process.argv[1] === 'limit';
    if (limit) await import(${JSON.stringify(new URL('../src/heap.ts', import.meta.url).href)}).then((m) => m.limitHeapGrowth());
    const keep = [];
    let most = 0;
    for (let round = 0; round < 300; round++) {
      const batch = [];
      for (let i = 0; i < 20000; i++) batch.push({ a: i, b: 'x' + i, c: [i] });
      keep.push(batch);
      if (keep.length > 20) keep.shift();
      most = Math.max(most, process.memoryUsage().heapTotal);
    }
    console.log(most);
  `;
  const run = (mode: string) => {
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, mode], {
      encoding: 'utf8',
    });
    assert.equal(out.status, 0, out.stderr);
    return Number(out.stdout.trim());
  };
  const limited = run('limit');
  const free = run('free');
  assert.ok(limited < free * 0.8, `heap at most ${limited} bytes with the limit, ${free} without`);
});
