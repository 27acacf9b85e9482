// One worker process of bench/queue: ferry's Worker (claims, fair share, settling, counters, leases:
// the engine as it runs in production) against a store that answers at once, so that what is
// measured is the queue and the database alone. It counts the SQL statements it sends. It starts
// claiming on "go" from its parent, and on SIGTERM stops and prints {"statements": n}.
import { createInterface } from 'node:readline';
import type { KyselyPlugin } from 'kysely';
import { systemClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/database.js';
import type { StoreCache } from '../../src/engine/store-cache.js';
import { Worker, workerId } from '../../src/engine/worker.js';
import { createLogger } from '../../src/log.js';
import type { Egress } from '../../src/net/egress.js';
import { Secret } from '../../src/secret.js';
import type { ObjectInfo, Store } from '../../src/stores/contract.js';

let statements = 0;
const counting: KyselyPlugin = {
  transformQuery(args) {
    statements++;
    return args.node;
  },
  async transformResult(args) {
    return args.result;
  },
};

const url = process.env.BENCH_DATABASE_URL;
const opened = openDatabase({
  dataDir: process.env.BENCH_DATA_DIR ?? '',
  databaseUrl: url ? new Secret(url) : undefined,
  poolSize: 10,
});
const db = { ...opened, kysely: opened.kysely.withPlugin(counting) };

/** Copies "server-side" in no time: the size it is told is the size it reports. */
const store: Store = {
  provider: 's3',
  account: 'bench',
  features: {
    bucketListing: true,
    hashes: [],
    upload: { minPartSize: 1, maxPartSize: 1, maxParts: 1, singleRequestMax: 1 },
    copy: async (_from: string, to: string, options) =>
      ({ path: to, size: options?.source?.size ?? 0, hashes: {} }) satisfies ObjectInfo,
  },
  list: () => {
    throw new Error('not used');
  },
  stat: async (path) => ({ path, size: 0, hashes: {} }),
  read: () => Promise.reject(new Error('not used')),
  write: () => Promise.reject(new Error('not used')),
  delete: async () => {},
  close: async () => {},
};
const use = { row: undefined as never, store, release: () => {} };
const stores = {
  use: <T>(_id: string, work: (u: typeof use) => Promise<T>) => work(use),
  acquire: async () => use,
  close: async () => {},
} as unknown as StoreCache;

const worker = new Worker(
  {
    db,
    clock: systemClock,
    logger: createLogger('warn', process.stderr),
    stores,
    owner: workerId(),
    egress: undefined as unknown as Egress,
  },
  {
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 16),
    perWorkspace: 1_000_000,
  },
);

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'go') worker.start();
});
process.once('SIGTERM', async () => {
  await worker.stop(1000);
  process.stdout.write(`${JSON.stringify({ statements })}\n`);
  await opened.close();
  process.exit(0);
});
process.stdout.write('ready\n');
