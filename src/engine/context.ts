// What every part of the engine is given by the worker that runs it: the database, the clock, the
// stores, the worker's owner name for its leases, and what wakes the event streams.

import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import type { Logger } from '../log.js';
import type { Egress } from '../net/egress.js';
import type { OutboundTimeouts } from '../net/time-bounds.js';
import type { CrashPolicy } from '../queue/backoff.js';
import type { Bandwidth } from './bandwidth.js';
import type { StoreCache } from './store-cache.js';

export interface EngineContext {
  db: Db;
  clock: Clock;
  logger: Logger;
  stores: StoreCache;
  owner: string;
  /**
   * Called after each write that watchers of progress may want (progress, a settlement, a job planned
   * or ended): wakes the event streams (docs/api.md, "Live progress"). Throttled by whoever passes it.
   */
  wakeStreams?: () => void;
  /** When work that keeps crashing is failed (FERRY_WORK_MAX_CRASHES); DEFAULT_CRASH_POLICY without it. */
  crashes?: CrashPolicy;
  /** What a pull may reach, and its time bounds: objects of a pull need them. */
  egress?: Egress;
  outbound?: OutboundTimeouts;
  /** The bandwidth caps (docs/api.md, "Bandwidth"); none without it. */
  bandwidth?: Bandwidth;
}
