// Long CPU work in a request or a job lets the event loop run every few milliseconds (docs/api.md,
// "Limits"): a loop calls the pause this returns after each step, and it yields to the event loop
// only once the loop has held it for a slice since the last time.
import { setImmediate as turn } from 'node:timers/promises';

/** How long a loop may keep the event loop before letting it run. */
export const SLICE_MS = 4;

/** A pause for one loop: resolves at once, or after a turn of the event loop once a slice is used. */
export function slicer(sliceMs = SLICE_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await turn();
    since = performance.now();
  };
}
