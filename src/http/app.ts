// Builds the HTTP application as a Fastify instance without listening (fastify/demo's app.ts):
// production listens on it in src/server.ts, tests call inject().
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifySchema,
  LogController,
} from 'fastify';
import { ErrorBody } from '../api/errors.js';
import { LABEL_MAX_LENGTH, PATH_MAX_LENGTH } from '../api/text.js';
import { ChangeReader } from '../domain/events/feed.js';
import { addProcessMetrics } from '../metrics.js';
import type { Services } from '../services.js';
import { bearerToken, registerAuth } from './auth.js';
import { parseJsonBody, refuseOtherBodies } from './bodies.js';
import { clientErrorHandler, guardConnections, serverOptions } from './connections.js';
import { errorHandler, frameworkErrorHandler, MethodTable, notFoundHandler } from './errors.js';
import { checkInput } from './input.js';
import { LazyChildLogger } from './lazy-logger.js';
import { fileBytesMetrics, requestMetrics } from './metrics.js';
import { registerRateLimits } from './rate-limits.js';
import { RefusedAuth, registerRefusedAuth } from './refused-auth.js';
import { auditRoutes } from './routes/audit.js';
import { bucketRoutes } from './routes/buckets.js';
import { consoleRoutes } from './routes/console.js';
import { copyRoutes } from './routes/copy.js';
import { eventRoutes } from './routes/events.js';
import { FILES_PREFIX, fileRoutes } from './routes/files.js';
import { jobRoutes } from './routes/jobs.js';
import { linkRoutes } from './routes/links.js';
import { listRoutes } from './routes/list.js';
import { locationRoutes } from './routes/locations.js';
import { operationRoutes } from './routes/operations.js';
import { planRoutes } from './routes/plans.js';
import { providerRoutes } from './routes/providers.js';
import { scheduleRoutes } from './routes/schedules.js';
import { sendRoutes } from './routes/sends.js';
import { serviceRoutes } from './routes/service.js';
import { shareDownloadRoutes } from './routes/share-downloads.js';
import { shareRoutes } from './routes/shares.js';
import { tokenRoutes } from './routes/tokens.js';
import { transferRoutes } from './routes/transfers.js';
import { verifyRoutes } from './routes/verify.js';
import { webhookRoutes } from './routes/webhooks.js';
import { schemaCompilers } from './schema-compilers.js';

/** Copy bodies may be 8 MiB; other bodies are small and get 1 MiB (docs/api.md, "Errors", 413). */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export interface AppOptions {
  /** Process-wide metrics (CPU, memory); off in tests that build many apps. */
  defaultMetrics?: boolean;
}

export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const loggerInstance: FastifyBaseLogger = services.logger;
  const limits = services.config.http;
  const methods = new MethodTable();
  const app = Fastify({
    ...serverOptions(limits),
    clientErrorHandler: clientErrorHandler(limits),
    frameworkErrors: frameworkErrorHandler(methods, async (header) =>
      services.apiKeys.authenticate(bearerToken(header)),
    ),
    loggerInstance,
    // One line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is made when a route or Fastify first logs through it (src/http/lazy-logger.ts;
    // test/http/lazy-logger.test.ts holds it to what Fastify's own child writes).
    childLoggerFactory: (logger, bindings, options) => new LazyChildLogger(logger, bindings, options),
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Validation must not coerce or drop: a mistyped or unknown field is a 400 (docs/api.md, "Errors").
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    // Each schema compiled once per process, however many apps it builds (src/http/schema-compilers.ts).
    schemaController: { compilersFactory: schemaCompilers },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();

  guardConnections(app.server, limits, { registry: services.metrics, logger: services.logger });
  app.addHook('onRoute', (route) =>
    methods.add(route.method, route.url, { public: route.config?.public === true }),
  );
  app.setErrorHandler(errorHandler);
  // Lone surrogates and deep nesting anywhere in a request, before any schema (docs/api.md, "Input").
  app.addHook('preValidation', checkInput);
  app.setNotFoundHandler(notFoundHandler(methods));
  app.addSchema(ErrorBody);
  // Bodies are JSON, and an empty body is no body (job retry and cancel take none: docs/api.md,
  // "Polling"); any other body is 415 (docs/api.md, "Errors").
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody(json));
  app.addContentTypeParser('*', refuseOtherBodies);

  // One hook after each answer: the request's log line, then its metrics. The route is its pattern,
  // never the raw URL: paths can carry share tokens and ids without bound.
  // The line carries only fixed fields (request id, method, route pattern, status, time), none of
  // them user data, so it is written by a child logger without the redaction pass (docs/performance.md,
  // "bench/api") that every other line takes.
  const observe = requestMetrics(services.metrics);
  const access = services.logger.child({}, { redact: { paths: [] } });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const ms = reply.elapsedTime;
    access.info(
      {
        reqId: request.id,
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(ms * 10) / 10,
      },
      'request',
    );
    observe(request.method, route, reply.statusCode, ms / 1000);
    done();
  });

  await app.register(swagger, {
    // Shared schemas appear under their $id ("Error"), not a generated name.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'ferry',
        version: '1.0.0',
        description: 'Move, share and manage files across cloud storage',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: openapiRoute,
  });

  registerAuth(app, services.apiKeys);
  registerRefusedAuth(
    app,
    new RefusedAuth(services.db, services.clock, services.logger.child({ component: 'audit' })),
  );
  registerRateLimits(app, services.rateLimits);
  if (options.defaultMetrics) addProcessMetrics(services.metrics);
  serviceRoutes(app, { db: services.db, registry: services.metrics });
  await app.register(locationRoutes(services.locations, () => services.refreshRequested()));
  await app.register(providerRoutes());
  await app.register(tokenRoutes(services.apiKeys));
  await app.register(auditRoutes(services.db));
  await app.register(listRoutes(services.locations, services.storage));
  await app.register(bucketRoutes(services.buckets));
  await app.register(
    fileRoutes({
      files: services.files,
      keyWatch: services.keyWatch,
      bytes: fileBytesMetrics(services.metrics),
      idleMs: limits.bodyTimeoutMs,
      throttle: (workspaceId) => services.bandwidth.forWorkspace(workspaceId),
    }),
  );
  const queued = () => services.workQueued();
  await app.register(copyRoutes({ copies: services.copies, plans: services.plans, queued }));
  const polled = {
    views: services.transferViews,
    control: services.jobControl,
    queued,
    reports: services.jobReports,
    keyWatch: services.keyWatch,
  };
  await app.register(transferRoutes(polled));
  await app.register(jobRoutes(polled));
  await app.register(verifyRoutes(services.copies, queued));
  await app.register(operationRoutes(services.operations, queued, services.plans));
  await app.register(planRoutes(services.plans, queued));
  await app.register(
    eventRoutes({
      changes: new ChangeReader(services.db.kysely, services.transferViews),
      signals: services.signals,
      clock: services.clock,
      logger: services.logger,
      keyWatch: services.keyWatch,
    }),
  );
  await app.register(shareRoutes(services.shares));
  await app.register(shareDownloadRoutes(services.shares));
  await app.register(sendRoutes(services.sends, queued));
  await app.register(webhookRoutes(services.webhooks));
  await app.register(scheduleRoutes(services.schedules, () => services.schedulesChanged(), queued));
  await app.register(
    linkRoutes({
      links: services.shareLinks,
      passwords: services.sharePasswords,
      storage: services.storage,
      registry: services.metrics,
      secureCookies: services.config.publicUrl.startsWith('https:'),
      formTimeoutMs: limits.formTimeoutMs,
    }),
  );
  await app.register(consoleRoutes());
  return app;
}

/**
 * The file routes read their wildcard themselves (src/http/routes/files.ts); /openapi.json names its two
 * parts (docs/api.md, "Files through ferry").
 */
const FILE_PARAMS = {
  type: 'object',
  required: ['location', 'path'],
  properties: {
    location: {
      type: 'string',
      minLength: 1,
      maxLength: LABEL_MAX_LENGTH,
      description: 'The location: its label or id, percent-encoded (a "/" in a label as %2F)',
    },
    path: {
      type: 'string',
      minLength: 1,
      maxLength: PATH_MAX_LENGTH,
      description:
        'The file: bucket/key on bucket stores, folder/…/name on folder stores; exact bytes, percent-encoded',
    },
  },
};

function openapiRoute({ schema, url }: { schema: FastifySchema; url: string }) {
  if (url !== `${FILES_PREFIX}*`) return { schema, url };
  return { url: `${FILES_PREFIX}{location}/{path}`, schema: { ...schema, params: FILE_PARAMS } };
}
