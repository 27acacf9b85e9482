// Every migration, by name. Names carry a date prefix so they sort in the order they were written.
import type { Migration } from 'kysely';
import * as foundation from './2026-11-22-foundation.js';
import * as transfers from './2026-11-22-transfers.js';
import * as transfersSourceEtag from './2026-11-22-transfers-source-etag.js';
import * as locationRefresh from './2026-11-24-location-refresh.js';
import * as sends from './2026-11-24-sends.js';
import * as shares from './2026-11-24-shares.js';
import * as fairClaims from './2026-11-25-fair-claims.js';
import * as jobCounters from './2026-11-25-job-counters.js';
import * as shareGuessIds from './2026-11-25-share-guess-ids.js';
import * as shareResumes from './2026-11-25-share-resumes.js';
import * as uploadCheckpoints from './2026-11-25-upload-checkpoints.js';
import * as authInvalidation from './2026-11-26-auth-invalidation.js';
import * as senderName from './2026-11-26-send-sender-name.js';
import * as transferTargets from './2026-11-26-transfer-targets.js';
import * as webhooks from './2026-11-26-webhooks.js';
import * as webhookCrashes from './2026-11-26-webhooks-crashes.js';
import * as workCrashes from './2026-11-26-work-crashes.js';
import * as rateLimits from './2026-11-26-workspace-rate-limits.js';
import * as retention from './2026-11-27-retention.js';
import * as bandwidth from './2026-11-28-bandwidth.js';
import * as plans from './2026-11-28-plans.js';
import * as reports from './2026-11-28-reports.js';
import * as schedules from './2026-11-28-schedules.js';
import * as sync from './2026-11-28-sync.js';
import * as audit from './2026-11-29-audit.js';
import * as keyScopes from './2026-11-29-key-scopes.js';
import * as shareAccess from './2026-11-30-share-access.js';
import * as keyLocations from './2026-12-01-key-locations.js';
import * as verified from './2026-12-02-verified.js';
import * as undo from './2026-12-03-undo.js';
import * as verify from './2026-12-03-verify.js';
import * as oneUndo from './2026-12-03-z-one-undo.js';
import * as proofOfTransfers from './2026-12-04-proof-of-transfers.js';
import * as sourceHashes from './2026-12-04-source-hashes.js';

// Kysely applies migrations in the order of their names and refuses one that sorts before a migration a
// database already ran: a new one must sort after every name here (a later date, not a later word).
export const migrations: Record<string, Migration> = {
  '2026-11-22-foundation': foundation,
  '2026-11-22-transfers': transfers,
  '2026-11-22-transfers-source-etag': transfersSourceEtag,
  '2026-11-24-location-refresh': locationRefresh,
  '2026-11-24-shares': shares,
  '2026-11-24-sends': sends,
  '2026-11-25-fair-claims': fairClaims,
  '2026-11-25-job-counters': jobCounters,
  '2026-11-25-share-guess-ids': shareGuessIds,
  '2026-11-25-share-resumes': shareResumes,
  '2026-11-25-upload-checkpoints': uploadCheckpoints,
  '2026-11-26-auth-invalidation': authInvalidation,
  '2026-11-26-webhooks': webhooks,
  '2026-11-26-work-crashes': workCrashes,
  '2026-11-26-workspace-rate-limits': rateLimits,
  '2026-11-26-webhooks-crashes': webhookCrashes,
  '2026-11-26-transfer-targets': transferTargets,
  '2026-11-26-send-sender-name': senderName,
  '2026-11-27-retention': retention,
  '2026-11-28-sync': sync,
  '2026-11-28-plans': plans,
  '2026-11-28-bandwidth': bandwidth,
  '2026-11-28-schedules': schedules,
  '2026-11-28-reports': reports,
  '2026-11-29-key-scopes': keyScopes,
  '2026-11-29-audit': audit,
  '2026-11-30-share-access': shareAccess,
  '2026-12-01-key-locations': keyLocations,
  '2026-12-02-verified': verified,
  '2026-12-03-undo': undo,
  '2026-12-03-verify': verify,
  '2026-12-03-z-one-undo': oneUndo,
  '2026-12-04-proof-of-transfers': proofOfTransfers,
  '2026-12-04-source-hashes': sourceHashes,
};
