// How far the V8 heap may grow past what was live at the last full collection before the next one.
// V8's own factor goes up to 4x on a machine with memory to spare; a transfer allocates and drops many
// short-lived objects (each object's requests, rows and log data), so during a bulk copy the heap
// filled with garbage to three or four times its live size before a full collection ran
// (docs/performance.md, "Memory"). 1.5x keeps the heap near what is in use, at no measurable CPU cost
// in bench/transfer. An operator who starts node with --heap-growing-percent keeps their own value.
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
