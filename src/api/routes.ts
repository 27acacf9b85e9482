// The API as its two clients call it (docs/api.md): for each route the CLI (src/cli) or the console
// (ui/src) calls, its method and path, and the types of its `{id}`, its query, its body and its answer,
// each the Static<> of the schema in src/api/ that the route validates with and /openapi.json shows. The
// clients call through this map (src/cli/http.ts, ui/src/api.ts), so tsc checks that a path exists
// with that method, what its body holds and what its answer is; and they take the API's types from
// here, re-exported at the end, rather than from the schema files (test/layering/ checks both).
//
// Types only, and one function with no imports (pathOf): the console's bundle and the CLI load it
// without TypeBox or anything of the server. Routes whose body or answer is a stream of bytes (files,
// reports, the event stream) are called raw and are not here.
import type { AuditAction, AuditEvent, AuditPage, AuditQuery } from './audit.js';
import type { CopyBody, SyncBody } from './copy.js';
import type { AmbiguousName, ErrorBody } from './errors.js';
import type { WebhookEvent } from './events.js';
import type { IdParam, Paging } from './input.js';
import type { ApiKey, ApiKeyList, CreateApiKeyBody, CreatedApiKey, UpdateApiKeyBody } from './keys.js';
import type { BucketBody, Entry, ListBody, Listing } from './listing.js';
import type {
  CreateLocationBody,
  LocationList,
  LocationProjection,
  LocationRef,
  LocationStatusView,
  LocationSummary,
  RenameLocationBody,
  ReplaceSecretBody,
} from './locations.js';
import type {
  MoveBody,
  MovePreview,
  MovePreviewBody,
  PullBody,
  Pulled,
  RemoveBody,
  RemovePreview,
  RemovePreviewBody,
} from './operations.js';
import type { Plan, PlanEntry } from './plans.js';
import type { ProviderField, ProviderList, ProviderView } from './providers.js';
import type {
  CreateScheduleBody,
  Schedule,
  SchedulePage,
  ScheduleRun,
  ScheduleWithRuns,
  UpdateScheduleBody,
} from './schedules.js';
import type { AnySend, Send, SendBody, SendItem, SendPage } from './sends.js';
import type {
  CreatedShare,
  CreateShareBody,
  Share,
  ShareDownload,
  ShareDownloadPage,
  SharePage,
} from './shares.js';
import type {
  Accepted,
  Canceled,
  Counts,
  Failures,
  Filter,
  Job,
  JobPage,
  JobsQuery,
  Planning,
  Queued,
  Transfer,
  TransferPage,
} from './transfers.js';
import type { VerifyBody } from './verify.js';
import type {
  CreatedWebhook,
  CreateWebhookBody,
  Delivery,
  DeliveryPage,
  UpdateWebhookBody,
  Webhook,
  WebhookList,
} from './webhooks.js';

/** What a retry, an undo, a cancel or a run takes: nothing, or {} (docs/api.md, "Polling"). */
type NoBody = Record<string, never> | undefined;

/**
 * One route: `body` and `query` as the route's schemas take them (a body that may be left out has
 * undefined among its types), `answer` as its 2xx answer (undefined: 204 or 202 without a body), and
 * with `dry_run` (docs/api.md, "Plans"), `plan`: the answer of a dry run.
 */
interface Route {
  query?: object;
  body?: unknown;
  answer: unknown;
  plan?: unknown;
}

/** Every route the clients call, by path (`{id}`: IdParam) and method. */
export interface Routes {
  '/v1/key': { GET: { answer: ApiKey } };
  '/v1/tokens': {
    GET: { answer: ApiKeyList };
    POST: { body: CreateApiKeyBody; answer: CreatedApiKey };
  };
  '/v1/tokens/{id}': {
    PATCH: { body: UpdateApiKeyBody; answer: undefined };
    DELETE: { answer: undefined };
  };

  '/v1/providers': { GET: { answer: ProviderList } };
  '/v1/locations': {
    GET: { answer: LocationList };
    POST: { body: CreateLocationBody; answer: LocationProjection };
    PUT: { body: ReplaceSecretBody; answer: LocationProjection };
    PATCH: { body: RenameLocationBody; answer: LocationProjection };
    DELETE: { body: LocationRef; answer: undefined };
  };
  '/v1/locations/get': { POST: { body: LocationRef; answer: LocationProjection } };
  '/v1/locations/refresh': { POST: { body: LocationRef; answer: undefined } };
  '/v1/locations/status': { POST: { body: LocationRef; answer: LocationStatusView } };

  '/v1/list': { POST: { body: ListBody; answer: Listing } };
  '/v1/buckets': { POST: { body: BucketBody; answer: Entry } };

  '/v1/copy': { POST: { body: CopyBody; answer: Accepted; plan: Plan } };
  '/v1/sync': { POST: { body: SyncBody; answer: Planning; plan: Plan } };
  '/v1/verify': { POST: { body: VerifyBody; answer: Planning } };
  '/pull': { POST: { body: PullBody; answer: Pulled } };
  '/move': { POST: { body: MoveBody; answer: Queued; plan: Plan } };
  '/move/preview': { POST: { body: MovePreviewBody; answer: MovePreview } };
  '/remove': { POST: { body: RemoveBody; answer: Queued; plan: Plan } };
  '/remove/preview': {
    POST: { body: RemovePreviewBody; answer: RemovePreview };
  };
  '/v1/plans/{id}': { GET: { query: Paging; answer: Plan } };
  '/v1/plans/{id}/run': { POST: { body: NoBody; answer: Accepted } };

  '/v1/transfers': { GET: { query: Paging; answer: TransferPage } };
  '/v1/transfers/{id}': { GET: { answer: Transfer } };
  '/v1/transfers/{id}/failures': { GET: { query: Paging; answer: Failures } };
  '/v1/transfers/{id}/retry': { POST: { body: NoBody; answer: Queued } };
  '/v1/jobs': { GET: { query: JobsQuery; answer: JobPage } };
  '/v1/jobs/{id}': { GET: { answer: Job } };
  '/v1/jobs/{id}/failures': { GET: { query: Paging; answer: Failures } };
  '/v1/jobs/{id}/retry': { POST: { body: NoBody; answer: Planning } };
  '/v1/jobs/{id}/undo': { POST: { body: NoBody; answer: Planning } };
  '/v1/jobs/{id}/cancel': { POST: { body: NoBody; answer: Canceled } };

  '/share': { POST: { body: CreateShareBody; answer: CreatedShare } };
  '/v1/shares': { GET: { query: Paging; answer: SharePage } };
  '/v1/shares/{id}': { DELETE: { answer: undefined } };
  '/v1/shares/{id}/downloads': { GET: { query: Paging; answer: ShareDownloadPage } };
  '/send': { POST: { body: SendBody; answer: Send } };
  '/v1/sends': { GET: { query: Paging; answer: SendPage } };
  '/v1/sends/{id}': { GET: { answer: SendItem } };
  '/v1/sends/{id}/cancel': { POST: { body: NoBody; answer: SendItem } };

  '/v1/schedules': {
    GET: { query: Paging; answer: SchedulePage };
    POST: { body: CreateScheduleBody; answer: Schedule };
  };
  '/v1/schedules/{id}': {
    GET: { answer: ScheduleWithRuns };
    PATCH: { body: UpdateScheduleBody; answer: Schedule };
    DELETE: { answer: undefined };
  };
  '/v1/schedules/{id}/run': { POST: { body: NoBody; answer: Planning } };

  '/v1/webhooks': {
    GET: { answer: WebhookList };
    POST: { body: CreateWebhookBody; answer: CreatedWebhook };
  };
  '/v1/webhooks/{id}': {
    GET: { answer: Webhook };
    PATCH: { body: UpdateWebhookBody; answer: Webhook };
    DELETE: { answer: undefined };
  };
  '/v1/webhooks/{id}/deliveries': { GET: { query: Paging; answer: DeliveryPage } };

  '/v1/audit': { GET: { query: AuditQuery; answer: AuditPage } };

  /** The API's description, of which the console reads the audit actions (the enum of ?action=). */
  '/openapi.json': { GET: { answer: OpenApi } };
}

/**
 * The part of /openapi.json a client reads: a parameter's enum. /openapi.json is made by
 * @fastify/swagger from the routes' schemas; it has no schema of its own.
 */
export interface OpenApi {
  paths?: Record<string, Record<string, { parameters?: { name: string; schema?: { enum?: unknown[] } }[] }>>;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** A method that sends a body (or may). */
export type SendMethod = Exclude<Method, 'GET'>;

/** The paths that take `method`. */
export type PathOf<M extends Method> = {
  [P in keyof Routes]: M extends keyof Routes[P] ? P : never;
}[keyof Routes];

type RouteOf<M extends Method, P extends PathOf<M>> = Routes[P][M & keyof Routes[P]] & Route;

/** A query: each field may be left out, or given as undefined (then not sent). */
type QueryOf<Q> = { [K in keyof Q]?: Q[K] | undefined };

/**
 * The body `method path` takes, for a caller that builds it before the call; without `dry_run`, which
 * a dry run adds (DryRunOf).
 */
export type BodyOf<M extends Method, P extends PathOf<M>> =
  RouteOf<M, P> extends { body: infer B }
    ? RouteOf<M, P> extends { plan: unknown }
      ? Omit<Exclude<B, undefined>, 'dry_run'>
      : Exclude<B, undefined>
    : never;

/**
 * What a call gives besides its method and path: `id` for a path with `{id}`, `query` for a route that
 * reads one, `body` for a route that takes one (may be left out where the route allows none; where the
 * route makes plans, with dry_run left out or false).
 */
export type RequestOf<M extends Method, P extends PathOf<M>> = (P extends `${string}{id}${string}`
  ? IdParam
  : { id?: never }) &
  (RouteOf<M, P> extends { query: infer Q } ? { query?: QueryOf<Q> } : { query?: never }) &
  (RouteOf<M, P> extends { body: infer B }
    ? undefined extends B
      ? { body?: BodyOf<M, P> }
      : RouteOf<M, P> extends { plan: unknown }
        ? { body: BodyOf<M, P> & { dry_run?: false } }
        : { body: BodyOf<M, P> }
    : { body?: never });

/** The request as a call's last argument, which may be left out where nothing in it is needed. */
export type RequestArgs<M extends Method, P extends PathOf<M>> =
  object extends RequestOf<M, P> ? [request?: RequestOf<M, P>] : [request: RequestOf<M, P>];

/** The answer of `method path`. */
export type AnswerOf<M extends Method, P extends PathOf<M>> = RouteOf<M, P>['answer'];

/** A dry run of `method path` (docs/api.md, "Plans"): its body with `dry_run: true`; never for a route without. */
export type DryRunOf<M extends Method, P extends PathOf<M>> =
  RouteOf<M, P> extends { plan: unknown } ? { body: BodyOf<M, P> & { dry_run: true } } : never;

/** The answer of a dry run of `method path`: its plan. */
export type PlanOf<M extends Method, P extends PathOf<M>> =
  RouteOf<M, P> extends { plan: infer D } ? D : never;

/** The URL path of a call: `{id}` filled in, and the query's fields that are given, in their order. */
export function pathOf(path: string, request?: { id?: string; query?: object }): string {
  const filled = request?.id === undefined ? path : path.replace('{id}', encodeURIComponent(request.id));
  const query = Object.entries(request?.query ?? {})
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return query === '' ? filled : `${filled}?${query}`;
}

// The API's types, for the clients: each the Static<> of its schema.
export type {
  Accepted,
  AmbiguousName,
  AnySend,
  ApiKey,
  AuditAction,
  AuditEvent,
  AuditPage,
  Canceled,
  Counts,
  CreatedApiKey,
  CreatedShare,
  CreatedWebhook,
  Delivery,
  Entry,
  ErrorBody,
  Failures,
  Filter,
  Job,
  Listing,
  LocationProjection,
  LocationStatusView,
  LocationSummary,
  Plan,
  PlanEntry,
  Planning,
  ProviderField,
  ProviderList,
  ProviderView,
  Pulled,
  Queued,
  Schedule,
  ScheduleRun,
  ScheduleWithRuns,
  Send,
  SendItem,
  Share,
  ShareDownload,
  Transfer,
  Webhook,
  WebhookEvent,
};
