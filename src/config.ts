// Settings from the environment (README, "Settings"). Read once at start; everything else takes
// a Config, so tests build one without touching process.env.
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { BANDWIDTH_MAX, BANDWIDTH_MIN } from './api/transfers.js';
import { DEFAULT_PATTERN_LIMITS, PATTERN_LIMIT_CEILINGS, type PatternLimits } from './objects/glob.js';
import { OAUTH_PROVIDERS } from './providers.js';
import { Secret } from './secret.js';
import { DEFAULT_OAUTH_APPS, type OAuthApp } from './stores/context.js';
import { DEFAULT_TRANSFER_MEMORY } from './stores/shared/memory.js';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… or undefined for the SQLite file in the data dir. */
  databaseUrl: Secret | undefined;
  /** Base64 32-byte key, or undefined to use (and create once) <dataDir>/master.key. */
  masterKey: Secret | undefined;
  /**
   * FERRY_MASTER_KEY_PREVIOUS: the base64 keys a master-key rotation replaces; they open records but never
   * seal (docs/security.md, "Rotating the master key"). Empty outside a rotation.
   */
  previousMasterKeys: Secret[];
  /**
   * FERRY_PUBLIC_URL, or the address ferry listens on. Under FERRY_PORT=0 without FERRY_PUBLIC_URL the
   * port is known once bound: `ferry serve` sets it then (src/server.ts), before any request is taken.
   */
  publicUrl: string;
  /** Whether publicUrl is the listening address (no FERRY_PUBLIC_URL), so follows the port bound. */
  publicUrlFollowsPort: boolean;
  egressAllow: string[];
  smtpUrl: Secret | undefined;
  /** Send: the From address, and the recipients a workspace may mail per hour. */
  mail: { from: string; recipientsPerHour: number };
  logLevel: string;
  oauthApps: Record<(typeof OAUTH_PROVIDERS)[number], OAuthApp>;
  refresh: { pollSeconds: number; aheadSeconds: number; maxFailures: number };
  /** Rate limits and caps per workspace (docs/api.md, "Rate limits and caps"). */
  rateLimits: RateLimitSettings;
  /** api: HTTP only; worker: transfers and background work only; all: both. */
  role: Role;
  worker: {
    concurrency: number;
    perLocation: number;
    /** Most objects and transfers one workspace runs at once, across every worker process. */
    perWorkspace: number;
    shutdownSeconds: number;
    leaseSeconds: number;
    /** Bytes of object data all transfers of the process may hold in memory at once. */
    memoryBytes: number;
  };
  /**
   * FERRY_WORKSPACE_BANDWIDTH: bytes per second all of a workspace's transfers through ferry share,
   * across every process (docs/api.md, "Bandwidth"); undefined: no cap.
   */
  workspaceBandwidth: number | undefined;
  /** The HTTP server's own defences (docs/api.md, "HTTP connections and bodies"). */
  http: HttpLimits;
  /** Work that keeps crashing (docs/api.md, "Background work that keeps failing"). */
  crashedWork: {
    /** Claims of one transfer, job object or send that may end in a crash before it is failed. */
    maxCrashes: number;
  };
  /** Retention (docs/api.md, "Retention"): finished work older than this many days is deleted; undefined keeps it. */
  retentionDays: number | undefined;
  /** The audit log (docs/api.md, "Audit log"): events older than this many days are deleted; undefined keeps them. */
  auditRetentionDays: number | undefined;
  /** Glob patterns in source paths (docs/api.md, "Limits"): checked when a request is validated. */
  patterns: PatternLimits;
  /** Time bounds of outbound calls and how webhook attempts share the process (docs/api.md, "Outbound calls"). */
  outbound: OutboundSettings;
}

export interface HttpLimits {
  /** Headers must arrive whole within this long of a request's first byte (or of the connection). */
  headersTimeoutMs: number;
  /** After the headers, the body must arrive whole within this long. */
  bodyTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
  /** Requests one connection may carry before the server closes it. */
  maxRequestsPerConnection: number;
  /** Open connections in all, across every client. */
  maxConnections: number;
  /** Open connections from one client address (an IPv6 /64 counts as one); 0 is no limit. */
  connectionsPerAddress: number;
  /**
   * Open connections that have not (yet) carried a valid API key: at most this many, so that the rest
   * of maxConnections is left for clients with a key (docs/security.md, "Clients without a key").
   */
  keylessConnections: number;
  /** A share link's form body (POST /s/{token}) must arrive whole within this long of its headers. */
  formTimeoutMs: number;
  /** Request line (the URL) and headers together. */
  maxHeaderBytes: number;
}

export interface OutboundSettings {
  /** One webhook attempt, from connecting to the end of the (at most 4 KiB) answer read. */
  webhookTimeoutSeconds: number;
  /** Webhook attempts one process makes at once, and at once to any one endpoint. */
  webhookConcurrency: number;
  webhookEndpointConcurrency: number;
  /** Waiting for an answer's headers (pull, provider APIs). */
  headersSeconds: number;
  /** A streamed body (a pulled file, a download) with no byte for this long has failed. */
  idleSeconds: number;
  /** An answer read whole (JSON, token endpoints, error bodies): the whole call. */
  answerSeconds: number;
}

export type Role = 'all' | 'api' | 'worker';

/** The named buckets of the per-workspace rate limit; each route that costs takes a place in one. */
export const RATE_BUCKETS = [
  'copy',
  'list',
  'preview',
  'transfer',
  'share',
  'send',
  'tokens',
  'locations',
  'webhooks',
  'files',
  'schedules',
] as const;
export type RateBucket = (typeof RATE_BUCKETS)[number];

export interface RateLimitSettings {
  /** Accepted requests per bucket per workspace in any rolling minute, across processes. */
  perMinute: Record<RateBucket, number>;
  /** Most of each resource a workspace may hold. */
  caps: { locations: number; keys: number; webhooks: number; openShares: number; schedules: number };
  /** Share passwords (docs/api.md, "Share links"): wrong guesses in any rolling minute. */
  shareGuesses: { perAddress: number; perLink: number; perLinkMax: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** FERRY_RETENTION_DAYS: whole days from 1, or 0 or `never` to keep finished work forever. */
function retentionDays(env: Env): number | undefined {
  const raw = env.FERRY_RETENTION_DAYS?.trim();
  if (raw?.toLowerCase() === 'never') return undefined;
  const days = integer(env, 'FERRY_RETENTION_DAYS', 30, 0, 36_500);
  return days === 0 ? undefined : days;
}

/** FERRY_AUDIT_RETENTION_DAYS: whole days from 1 (default 90), or 0 or `never` to keep the audit log forever. */
function auditRetentionDays(env: Env): number | undefined {
  const raw = env.FERRY_AUDIT_RETENTION_DAYS?.trim();
  if (raw?.toLowerCase() === 'never') return undefined;
  const days = integer(env, 'FERRY_AUDIT_RETENTION_DAYS', 90, 0, 36_500);
  return days === 0 ? undefined : days;
}

/** FERRY_WORKSPACE_BANDWIDTH: bytes per second (or KiB, MiB, GiB), from 64 KiB to 10 GiB; unset: none. */
function workspaceBandwidth(env: Env): number | undefined {
  const value = byteSize(env, 'FERRY_WORKSPACE_BANDWIDTH', 0, BANDWIDTH_MIN, BANDWIDTH_MAX);
  return value === 0 ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

const UNITS: Record<string, number> = {
  '': 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};

/** 16777216 → "16 MiB", 1536 → "1536 bytes". */
function describeSize(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** A size in bytes, or with a binary unit: "268435456", "256MiB", "1GiB", "512m". */
function byteSize(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(raw);
  const unit = match ? UNITS[(match[2] ?? '').toLowerCase()] : undefined;
  const value = match && unit !== undefined ? Number(match[1]) * unit : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(
      `${name} must be a size from ${describeSize(min)} to ${describeSize(max)} (bytes, or with KiB, MiB or GiB), got "${raw}"`,
    );
  }
  return value;
}

function httpLimits(env: Env): HttpLimits {
  const maxConnections = integer(env, 'FERRY_HTTP_MAX_CONNECTIONS', 4096, 1, 1_000_000);
  return {
    headersTimeoutMs: integer(env, 'FERRY_HTTP_HEADERS_TIMEOUT_SECONDS', 20, 1, 3600) * 1000,
    bodyTimeoutMs: integer(env, 'FERRY_HTTP_BODY_TIMEOUT_SECONDS', 60, 1, 86400) * 1000,
    keepAliveTimeoutMs: integer(env, 'FERRY_HTTP_KEEPALIVE_TIMEOUT_SECONDS', 65, 1, 3600) * 1000,
    maxRequestsPerConnection: integer(env, 'FERRY_HTTP_MAX_REQUESTS_PER_CONNECTION', 1000, 1, 1_000_000),
    maxConnections,
    connectionsPerAddress: integer(env, 'FERRY_HTTP_CONNECTIONS_PER_ADDRESS', 256, 0, 1_000_000),
    // An eighth of the total is kept for clients with a key (512 of 4096).
    keylessConnections: integer(
      env,
      'FERRY_HTTP_KEYLESS_CONNECTIONS',
      maxConnections - Math.floor(maxConnections / 8),
      1,
      maxConnections,
    ),
    formTimeoutMs: integer(env, 'FERRY_HTTP_FORM_TIMEOUT_SECONDS', 10, 1, 3600) * 1000,
    maxHeaderBytes: byteSize(env, 'FERRY_HTTP_MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 ** 2),
  };
}

function optionalSecret(env: Env, name: string): Secret | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : new Secret(raw);
}

function oauthApps(env: Env): Config['oauthApps'] {
  const apps = {} as Config['oauthApps'];
  for (const provider of OAUTH_PROVIDERS) {
    const prefix = `FERRY_${provider.toUpperCase()}_`;
    const defaults = DEFAULT_OAUTH_APPS[provider];
    const app: OAuthApp = {
      tokenUrl: env[`${prefix}TOKEN_URL`] || defaults.tokenUrl,
      apiUrl: env[`${prefix}API_URL`] || defaults.apiUrl,
    };
    // Only dropbox and box serve file contents from a host of their own; the others have no such setting.
    if (defaults.contentUrl !== undefined)
      app.contentUrl = env[`${prefix}CONTENT_URL`] || defaults.contentUrl;
    const clientId = env[`${prefix}CLIENT_ID`];
    if (clientId) app.clientId = clientId;
    const clientSecret = optionalSecret(env, `${prefix}CLIENT_SECRET`);
    if (clientSecret) app.clientSecret = clientSecret;
    apps[provider] = app;
  }
  return apps;
}

function role(value: string | undefined): Role {
  if (value === undefined || value === '') return 'all';
  if (value === 'all' || value === 'api' || value === 'worker') return value;
  throw new ConfigError(`FERRY_ROLE must be api, worker or all, got "${value}"`);
}

// Rate limits and caps (docs/api.md, "Rate limits and caps"): one block of settings, defaults generous
// enough for a team working by hand and for scripts that pace themselves.
const PER_MINUTE_DEFAULTS: Record<RateBucket, number> = {
  copy: 30,
  list: 600,
  preview: 120,
  transfer: 60,
  share: 60,
  send: 60,
  tokens: 60,
  locations: 60,
  webhooks: 60,
  files: 600,
  schedules: 60,
};

function rateLimitSettings(env: Env): RateLimitSettings {
  const perMinute = {} as Record<RateBucket, number>;
  for (const bucket of RATE_BUCKETS) {
    const name = `FERRY_RATE_${bucket.toUpperCase()}_PER_MINUTE`;
    perMinute[bucket] = integer(env, name, PER_MINUTE_DEFAULTS[bucket], 1, 1_000_000);
  }
  const perLink = integer(env, 'FERRY_SHARE_GUESSES_PER_LINK', 20, 1, 100_000);
  const perLinkMax = integer(env, 'FERRY_SHARE_GUESSES_PER_LINK_MAX', 100, 1, 100_000);
  if (perLinkMax < perLink) {
    throw new ConfigError('FERRY_SHARE_GUESSES_PER_LINK_MAX must be at least FERRY_SHARE_GUESSES_PER_LINK');
  }
  return {
    perMinute,
    caps: {
      locations: integer(env, 'FERRY_MAX_LOCATIONS', 1000, 1, 10_000_000),
      keys: integer(env, 'FERRY_MAX_KEYS', 1000, 1, 10_000_000),
      webhooks: integer(env, 'FERRY_MAX_WEBHOOKS', 20, 1, 10_000),
      schedules: integer(env, 'FERRY_MAX_SCHEDULES', 100, 1, 10_000),
      openShares: integer(env, 'FERRY_MAX_OPEN_SHARES', 10_000, 1, 10_000_000),
    },
    shareGuesses: {
      perAddress: integer(env, 'FERRY_SHARE_GUESSES_PER_ADDRESS', 5, 1, 100_000),
      perLink,
      perLinkMax,
    },
  };
}

export function loadConfig(env: Env = process.env): Config {
  const host = env.FERRY_HOST || '127.0.0.1';
  const port = integer(env, 'FERRY_PORT', 8080, 0, 65535);
  const databaseUrl = optionalSecret(env, 'FERRY_DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl.reveal())) {
    throw new ConfigError('FERRY_DATABASE_URL must start with postgres:// or postgresql://');
  }
  const smtpUrl = optionalSecret(env, 'FERRY_SMTP_URL');
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl.reveal())) {
    throw new ConfigError('FERRY_SMTP_URL must start with smtp:// or smtps://');
  }
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  const publicUrl = (env.FERRY_PUBLIC_URL || `http://${hostForUrl}:${port}`).replace(/\/+$/, '');
  let publicHost: string;
  try {
    publicHost = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
  } catch {
    throw new ConfigError(`FERRY_PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`);
  }
  const mailFrom = env.FERRY_MAIL_FROM || defaultMailFrom(publicHost);
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(mailFrom) && !/<[^\s@<>]+@[^\s@<>]+>$/.test(mailFrom)) {
    throw new ConfigError(`FERRY_MAIL_FROM must be an e-mail address, got "${mailFrom}"`);
  }
  return {
    host,
    port,
    dataDir: resolve(env.FERRY_DATA_DIR || './data'),
    databaseUrl,
    masterKey: optionalSecret(env, 'FERRY_MASTER_KEY'),
    previousMasterKeys: (env.FERRY_MASTER_KEY_PREVIOUS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => new Secret(s)),
    publicUrl,
    publicUrlFollowsPort: !env.FERRY_PUBLIC_URL,
    egressAllow: (env.FERRY_EGRESS_ALLOW ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    smtpUrl,
    mail: {
      from: mailFrom,
      recipientsPerHour: integer(env, 'FERRY_SEND_RECIPIENTS_PER_HOUR', 200, 1, 1_000_000),
    },
    logLevel: env.FERRY_LOG_LEVEL || 'info',
    oauthApps: oauthApps(env),
    role: role(env.FERRY_ROLE),
    worker: {
      concurrency: integer(env, 'FERRY_WORKER_CONCURRENCY', 16, 1, 1024),
      perLocation: integer(env, 'FERRY_LOCATION_CONCURRENCY', 16, 1, 1024),
      perWorkspace: integer(env, 'FERRY_WORKSPACE_CONCURRENCY', 32, 1, 100_000),
      shutdownSeconds: integer(env, 'FERRY_SHUTDOWN_SECONDS', 25, 0, 3600),
      // How long a claim lasts unless renewed (every third of it): a dead worker's objects go to
      // another worker this long after it died.
      leaseSeconds: integer(env, 'FERRY_WORKER_LEASE_SECONDS', 30, 3, 3600),
      memoryBytes: byteSize(
        env,
        'FERRY_TRANSFER_MEMORY',
        DEFAULT_TRANSFER_MEMORY,
        16 * 1024 ** 2,
        64 * 1024 ** 3,
      ),
    },
    http: httpLimits(env),
    rateLimits: rateLimitSettings(env),
    refresh: {
      pollSeconds: integer(env, 'FERRY_REFRESH_POLL_SECONDS', 30, 1, 86400),
      aheadSeconds: integer(env, 'FERRY_REFRESH_AHEAD_SECONDS', 600, 0, 86400),
      maxFailures: integer(env, 'FERRY_REFRESH_MAX_FAILURES', 5, 1, 1000),
    },
    crashedWork: {
      // Three: a crash that is not the work's fault (a deploy's SIGKILL, a neighbour's out-of-memory
      // kill) rarely lands on the same row three times, while work that crashes every process that
      // claims it costs at most three crashes (each a lease plus a restart) before it is failed.
      maxCrashes: integer(env, 'FERRY_WORK_MAX_CRASHES', 3, 1, 100),
    },
    retentionDays: retentionDays(env),
    auditRetentionDays: auditRetentionDays(env),
    workspaceBandwidth: workspaceBandwidth(env),
    patterns: {
      maxLength: integer(
        env,
        'FERRY_PATTERN_MAX_LENGTH',
        DEFAULT_PATTERN_LIMITS.maxLength,
        1,
        PATTERN_LIMIT_CEILINGS.maxLength,
      ),
      maxWildcards: integer(
        env,
        'FERRY_PATTERN_MAX_WILDCARDS',
        DEFAULT_PATTERN_LIMITS.maxWildcards,
        0,
        PATTERN_LIMIT_CEILINGS.maxWildcards,
      ),
      maxAlternatives: integer(
        env,
        'FERRY_PATTERN_MAX_ALTERNATIVES',
        DEFAULT_PATTERN_LIMITS.maxAlternatives,
        0,
        PATTERN_LIMIT_CEILINGS.maxAlternatives,
      ),
    },
    outbound: {
      webhookTimeoutSeconds: integer(env, 'FERRY_WEBHOOK_TIMEOUT_SECONDS', 15, 1, 300),
      webhookConcurrency: integer(env, 'FERRY_WEBHOOK_CONCURRENCY', 16, 1, 1024),
      webhookEndpointConcurrency: integer(env, 'FERRY_WEBHOOK_ENDPOINT_CONCURRENCY', 2, 1, 1024),
      headersSeconds: integer(env, 'FERRY_OUTBOUND_HEADERS_SECONDS', 60, 1, 3600),
      idleSeconds: integer(env, 'FERRY_OUTBOUND_IDLE_SECONDS', 120, 1, 3600),
      answerSeconds: integer(env, 'FERRY_OUTBOUND_ANSWER_SECONDS', 30, 1, 3600),
    },
  };
}

/**
 * `ferry@<host>` for a DNS name; an IP address becomes an address literal (RFC 5321: `ferry@[192.0.2.1]`,
 * `ferry@[IPv6:2001:db8::1]`), since a bare IP is no mail domain (docs/api.md, "Send").
 */
export function defaultMailFrom(host: string): string {
  const version = isIP(host);
  if (version === 4) return `ferry@[${host}]`;
  if (version === 6) return `ferry@[IPv6:${host}]`;
  return `ferry@${host}`;
}
