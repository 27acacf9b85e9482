// The composition root: from settings to a database, a keyring and the domain services. The server,
// the CLI and the tests all build their world here, so there is one way to wire ferry.

import type { Registry } from 'prom-client';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config.js';
import type { Keyring } from './crypto/envelope.js';
import { loadKeyring } from './crypto/master-key.js';
import { type Db, migrateToLatest, openDatabase } from './db/database.js';
import { createSignals, type Signals } from './db/signals.js';
import { ApiKeys } from './domain/api-keys.js';
import { AuthCache, invalidationsFor } from './domain/auth-cache.js';
import { Buckets } from './domain/buckets.js';
import { Files } from './domain/files.js';
import { KeyWatch } from './domain/key-watch.js';
import { Locations } from './domain/locations/locations.js';
import { Plans } from './domain/plans/plans.js';
import { RateLimits } from './domain/rate-limit.js';
import { AccessTokens } from './domain/refresher/access-tokens.js';
import { refreshMetrics } from './domain/refresher/metrics.js';
import type { RefreshDeps } from './domain/refresher/refresh.js';
import { ScheduleActions } from './domain/schedules/actions.js';
import { ScheduleRunner } from './domain/schedules/runs.js';
import { Schedules } from './domain/schedules/schedules.js';
import { Sends } from './domain/sends/sends.js';
import { ShareLinks } from './domain/shares/links.js';
import { SharePasswords } from './domain/shares/passwords.js';
import { Shares } from './domain/shares/shares.js';
import { Storage } from './domain/storage.js';
import { Copies } from './domain/transfers/copy.js';
import { JobControl } from './domain/transfers/job-control.js';
import { Operations } from './domain/transfers/operations.js';
import { JobReports } from './domain/transfers/report.js';
import { TransferViews } from './domain/transfers/views.js';
import { Webhooks } from './domain/webhooks/webhooks.js';
import { Bandwidth } from './engine/bandwidth.js';
import { workerId } from './engine/worker.js';
import type { Logger } from './log.js';
import { createMailer, type Mailer } from './mail/mailer.js';
import { authCacheMetrics, createRegistry, transferMemoryMetrics } from './metrics.js';
import { createEgress } from './net/egress.js';
import { outboundTimeouts } from './net/time-bounds.js';
import type { StoreContext } from './stores/context.js';
import { MemoryBudget } from './stores/shared/memory.js';

export interface Services {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  /** The process's Prometheus registry (GET /metrics). */
  metrics: Registry;
  keyring: Keyring;
  apiKeys: ApiKeys;
  /** Ends live answers (event streams) when their key is revoked or expires. */
  keyWatch: KeyWatch;
  locations: Locations;
  storage: Storage;
  /** Buckets and containers made on request (POST /v1/buckets). */
  buckets: Buckets;
  /**
   * Files through ferry (PUT, GET and HEAD /v1/files/…): each upload and download, from opening its
   * store to closing it.
   */
  files: Files;
  stores: StoreContext;
  /** What the refresher and the stores' token renewals share (this process's lease owner id among it). */
  refresh: RefreshDeps;
  /** Called when a refresh is requested: wakes the refreshers of every process. */
  refreshRequested: () => void;
  copies: Copies;
  /** Dry runs and their plans (docs/api.md, "Plans"). */
  plans: Plans;
  /** The per-workspace rate limit of every route that costs (docs/api.md, "Rate limits and caps"). */
  rateLimits: RateLimits;
  /** The bandwidth caps' token buckets, shared with every process (docs/api.md, "Bandwidth"). */
  bandwidth: Bandwidth;
  operations: Operations;
  /** Share links as their owner sees them: made, listed, revoked, their access log. */
  shares: Shares;
  /** A share link seen by whoever holds its URL: its token, its downloads, its grants. */
  shareLinks: ShareLinks;
  /** Password attempts on share links, limited per address and per link. */
  sharePasswords: SharePasswords;
  sends: Sends;
  /** The SMTP transporter, when FERRY_SMTP_URL is set. */
  mailer: Mailer | undefined;
  transferViews: TransferViews;
  /** A job's report, streamed a page at a time (docs/api.md, "Reports"). */
  jobReports: JobReports;
  jobControl: JobControl;
  webhooks: Webhooks;
  /** Recurring copies and syncs (docs/api.md, "Schedules"). */
  schedules: Schedules;
  /** Runs a claimed schedule: the scheduler of each worker process and manual runs share it. */
  scheduleRunner: ScheduleRunner;
  /** Called when a schedule is created or changed: wakes the schedulers of every process. */
  schedulesChanged: () => void;
  /** Wake-ups between processes (NOTIFY on PostgreSQL). */
  signals: Signals;
  /** Called when work is queued: wakes the workers of every process. */
  workQueued: () => void;
  close(): Promise<void>;
}

export interface ServicesOptions {
  logger: Logger;
  clock?: Clock;
  /** Run migrations before anything else (the server and CLI do; a test may share a migrated db). */
  migrate?: boolean;
}

export async function createServices(config: Config, options: ServicesOptions): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const keyring = loadKeyring(config.dataDir, config.masterKey, config.previousMasterKeys);
  const db = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (options.migrate ?? true) {
      const applied = await migrateToLatest(db);
      if (applied.length > 0)
        options.logger.info({ migrations: applied, database: db.description }, 'migrated');
    }
  } catch (err) {
    await db.close();
    throw err;
  }
  const signals = createSignals(db, config.databaseUrl, options.logger);
  const invalidations = invalidationsFor(db, signals);
  const authCache = new AuthCache(invalidations);
  const keyWatch = new KeyWatch(db.kysely, clock, invalidations);
  const caps = config.rateLimits.caps;
  const locations = new Locations(
    db.kysely,
    keyring,
    clock,
    (workspaceId) => authCache.forgetWorkspace(workspaceId),
    caps.locations,
  );
  const metrics = createRegistry();
  authCacheMetrics(metrics, authCache);
  const memory = new MemoryBudget(config.worker.memoryBytes);
  transferMemoryMetrics(metrics, memory);
  const stores: StoreContext = {
    egress: createEgress(config.egressAllow),
    oauthApps: config.oauthApps,
    memory,
    outbound: outboundTimeouts(config.outbound),
  };
  const refresh: RefreshDeps = {
    db,
    keyring,
    clock,
    logger: options.logger.child({ component: 'refresher' }),
    metrics: refreshMetrics(metrics, db),
    apps: config.oauthApps,
    owner: workerId(),
    settings: {
      aheadMs: config.refresh.aheadSeconds * 1000,
      maxFailures: config.refresh.maxFailures,
      leaseMs: config.worker.leaseSeconds * 1000,
      tokenTimeoutMs: config.outbound.answerSeconds * 1000,
    },
    clientErrorsLogged: new Set(),
  };
  const storage = new Storage(locations, stores, new AccessTokens(refresh));
  const operations = new Operations(db, locations, storage, stores.egress, clock, config.patterns);
  const shares = new Shares(db, operations, storage, clock, () => config.publicUrl, caps.openShares);
  const mailer = config.smtpUrl ? createMailer(config.smtpUrl) : undefined;
  const transferViews = new TransferViews(db.kysely);
  const rateLimits = new RateLimits(db, clock, config.rateLimits.perMinute);
  const copies = new Copies(locations, clock, rateLimits, config.patterns);
  const scheduleActions = new ScheduleActions(copies);
  const scheduleRunner = new ScheduleRunner({
    db,
    clock,
    logger: options.logger.child({ component: 'scheduler' }),
    actions: scheduleActions,
  });
  return {
    config,
    db,
    clock,
    logger: options.logger,
    metrics,
    keyring,
    apiKeys: new ApiKeys(db.kysely, clock, authCache, caps.keys),
    keyWatch,
    locations,
    storage,
    buckets: new Buckets(db.kysely, locations, storage, clock),
    files: new Files(db.kysely, locations, storage, clock),
    stores,
    refresh,
    signals,
    refreshRequested: () => signals.notify('refresh'),
    copies,
    plans: new Plans(db, locations, storage, copies, operations, rateLimits, clock),
    rateLimits,
    bandwidth: new Bandwidth(db, clock, config.workspaceBandwidth, options.logger),
    operations,
    shares,
    shareLinks: new ShareLinks(db.kysely, clock),
    sharePasswords: new SharePasswords(db, clock, config.rateLimits.shareGuesses),
    sends: new Sends(db, shares, clock, {
      smtpConfigured: mailer !== undefined,
      recipientsPerHour: config.mail.recipientsPerHour,
      openShares: caps.openShares,
    }),
    mailer,
    transferViews,
    jobReports: new JobReports(db.kysely),
    jobControl: new JobControl(db.kysely, transferViews, clock, () => signals.notify('cancel')),
    webhooks: new Webhooks(db.kysely, keyring, stores.egress, clock, caps.webhooks),
    schedules: new Schedules(db.kysely, clock, scheduleActions, scheduleRunner, workerId(), caps.schedules),
    scheduleRunner,
    schedulesChanged: () => signals.notify('schedules'),
    workQueued: () => signals.notify('work'),
    close: async () => {
      mailer?.close();
      keyWatch.close();
      authCache.close();
      await signals.close();
      await db.close();
    },
  };
}
