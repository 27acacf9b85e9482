// The share links ferry serves at /s/{token} (docs/api.md, "Share links"), public like /healthz. The
// file streams from its source at that moment, nothing cached: with its type, length, an attachment
// Content-Disposition (RFC 6266 filename*), its ETag or Last-Modified, and byte ranges (Range,
// If-Range, 206, 416) so a download resumes. A password link answers a form whose POST downloads and
// sets an hour's cookie scoped to the link; a link with a download limit answers a landing page whose
// button POSTs the download, so link scanners do not use it up. A download counts when a response from
// byte 0 starts, once the source has sent its first bytes; on a link with a download limit, a range
// further on counts too unless the client began a download there within the hour (its cookie or its
// address), and such a range is served even once the limit is reached; HEAD never counts. The token
// is never logged (the access log has the route pattern).
//
// No key is needed here, so nothing here may let a client hold a connection for long (docs/security.md,
// "Clients without a key"): a POST's token is looked up before its body is read, and a link that does
// not serve (unknown, revoked, expired, used up) is answered at once without reading it; a link that
// serves has FERRY_HTTP_FORM_TIMEOUT_SECONDS for its form (a password: a few hundred bytes), then 408.
// Any answer given before the body was read whole closes the connection, as the API's errors do.
import type { ServerResponse } from 'node:http';
import { PassThrough, pipeline, type Readable, Transform } from 'node:stream';
import fastifyCookie from '@fastify/cookie';
import formBody from '@fastify/formbody';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { ShareRow } from '../../db/schema.js';
import type { LinkState, ShareLinks } from '../../domain/shares/links.js';
import type { SharePasswords } from '../../domain/shares/passwords.js';

import type { Storage } from '../../domain/storage.js';
import { isFerryError } from '../../errors.js';
import type { ObjectInfo, Store } from '../../stores/contract.js';
import { errorHandler } from '../errors.js';
import {
  baseName,
  clearFileHeaders,
  fileAnswer,
  firstBytes,
  readOptions,
  sendFileBody,
} from '../file-answer.js';
import {
  type FileFacts,
  landingPage,
  messagePage,
  passwordPage,
  SHARE_CSS,
  startingPage,
} from '../pages/share-pages.js';
import { securityHeaders } from '../security-headers.js';

const COOKIE = 'ferry_share';
const FORM_LIMIT = 4096;

export interface LinkDeps {
  links: ShareLinks;
  passwords: SharePasswords;
  storage: Storage;
  registry: Registry;
  /** Cookies get Secure when links are served over https (FERRY_PUBLIC_URL). */
  secureCookies: boolean;
  /** A POST's form body must arrive whole within this long of its headers (FERRY_HTTP_FORM_TIMEOUT_SECONDS). */
  formTimeoutMs: number;
}

type Lookup = { row: ShareRow | undefined; state: LinkState };

/** A page answered before the body is read: thrown from preParsing, so Fastify reads none of it. */
class EarlyPage extends Error {
  constructor(
    readonly status: number,
    readonly page: string,
  ) {
    super(`share link answered ${status} before its body`);
  }
}

const notFound = () =>
  new EarlyPage(404, messagePage('Link not found', 'This link does not exist, or it was revoked.'));

/**
 * The page for a link that does not serve this request (unknown or revoked, expired, or used up and
 * not `resumes`: docs/api.md, "Share links"), or undefined when it serves.
 */
async function refusal(
  { row, state }: Lookup,
  resumes: () => boolean | Promise<boolean>,
): Promise<EarlyPage | undefined> {
  if (!row || state === 'unknown') return notFound();
  if (state === 'expired') return new EarlyPage(410, messagePage('Link expired', 'This link has expired.'));
  if (state === 'used_up' && !(await resumes())) {
    return new EarlyPage(410, messagePage('Link used up', 'This link has been used as often as it may be.'));
  }
  return undefined;
}

/**
 * The request's body as Fastify's form parser reads it, cut off with 408 (connection closed) when it
 * has not arrived whole within `ms`. The deadline ends with the answer too: a body nobody reads (a
 * content type without a parser, 415) is not cut off after its request has been answered.
 */
function withDeadline(payload: Readable, ms: number, answer: ServerResponse): Readable {
  const out = new PassThrough();
  const timer = setTimeout(() => {
    out.destroy(
      Object.assign(new Error(`the form did not arrive within ${ms / 1000} s`), { statusCode: 408 }),
    );
  }, ms);
  const stop = () => clearTimeout(timer);
  out.once('end', stop);
  out.once('close', stop);
  answer.once('close', stop);
  // The parser reading the body reports its error; with none reading it, there is nothing to report.
  out.on('error', () => {});
  payload.once('error', (err) => out.destroy(err));
  payload.pipe(out);
  return out;
}

type Mode = 'get' | 'head' | 'post';

function html(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

function cookieOf(request: FastifyRequest): string | undefined {
  return request.cookies[COOKIE];
}

export const linkRoutes =
  (deps: LinkDeps): FastifyPluginAsync =>
  async (app) => {
    const { links, passwords, storage } = deps;
    const downloads = new Counter({
      name: 'ferry_share_downloads_total',
      help: 'Share link downloads counted (docs/api.md, "Share links") and served',
      registers: [deps.registry],
    });
    const refused = new Counter({
      name: 'ferry_share_passwords_refused_total',
      help: 'Wrong passwords given to share links',
      registers: [deps.registry],
    });

    // Registered here, so only these routes parse cookies and forms; the API pays nothing. A form's
    // fields are read as URLSearchParams reads them: a repeated name keeps its last value.
    await app.register(fastifyCookie);
    await app.register(formBody, {
      bodyLimit: FORM_LIMIT,
      parser: (body) => Object.fromEntries(new URLSearchParams(body)),
    });

    const open = { config: { public: true }, schema: { hide: true }, exposeHeadRoute: false };

    // Every answer here given before the request's body was read whole ends its connection: otherwise
    // Node reads the rest to reuse the connection, at whatever pace the client sends it.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (request.raw.complete === false) reply.header('connection', 'close');
      done(null, payload);
    });
    app.setErrorHandler((err, request, reply) => {
      if (!(err instanceof EarlyPage)) return errorHandler(err as FastifyError, request, reply);
      securityHeaders(reply);
      return html(reply, err.status, err.page);
    });
    /** What the token's lookup answered, for a POST whose hook looked it up before the body. */
    const looked = new WeakMap<FastifyRequest, Lookup>();
    const beforeBody = async (request: FastifyRequest, reply: FastifyReply, payload: Readable) => {
      const lookup = await links.byToken((request.params as { token: string }).token);
      const page = await refusal(lookup, () => false);
      if (page) throw page;
      looked.set(request, lookup);
      // Only a body still coming has a deadline (inject()'s requests say nothing of completeness).
      return request.raw.complete === false ? withDeadline(payload, deps.formTimeoutMs, reply.raw) : payload;
    };

    app.get('/s/share.css', open, async (_request, reply) => {
      securityHeaders(reply);
      reply.header('cache-control', 'public, max-age=3600');
      return reply.type('text/css; charset=utf-8').send(SHARE_CSS);
    });

    const handler = (mode: Mode) => async (request: FastifyRequest, reply: FastifyReply) => {
      securityHeaders(reply);
      const token = (request.params as { token: string }).token;
      const lookup = looked.get(request) ?? (await links.byToken(token));
      const { row } = lookup;
      // Whether a range from this client continues a download it began (asked once, when needed).
      let continues: Promise<boolean> | undefined;
      const continuing = () =>
        (continues ??= row
          ? links.continuesDownload(row, cookieOf(request), request.ip)
          : Promise.resolve(false));
      // A used-up link still lets a download it served resume (docs/api.md, "Share links").
      const resuming = mode === 'get' && request.headers.range !== undefined;
      const refusedPage = await refusal(lookup, () => resuming && continuing());
      if (refusedPage || !row) {
        const page = refusedPage ?? notFound();
        return html(reply, page.status, page.page);
      }
      let store: Store | undefined;
      let info: ObjectInfo;
      try {
        store = storage.open(await links.location(row));
        info = await store.stat(row.path);
      } catch (err) {
        await store?.close();
        return unavailable(request, reply, err);
      }
      let handedOff = false;
      // Whether this answer gives the link's cookie already (the password was just given).
      let granted = false;
      try {
        const facts: FileFacts = { name: baseName(row.path), size: info.size, expiresAt: row.expires_at };
        const action = `/s/${encodeURIComponent(token)}`;
        if (mode === 'post') {
          if (row.password_hash !== null) {
            const password = (request.body as Record<string, unknown> | undefined)?.password;
            const answer = await passwords.tryPassword(
              row,
              typeof password === 'string' ? password : '',
              request.ip,
              request.headers['user-agent'],
            );
            if (typeof answer === 'object') {
              const wait = answer.retryAfterSeconds;
              reply.header('retry-after', String(wait));
              return html(
                reply,
                429,
                messagePage('Too many attempts', `Too many wrong passwords. Try again in ${wait} seconds.`),
              );
            }
            if (answer === 'wrong') {
              refused.inc();
              return html(reply, 401, passwordPage(facts, action, 'That password is not right.'));
            }
            setGrantCookie(reply, await links.grant(row), action);
            granted = true;
            // A browser's form gets a page that replaces the form and starts the download (a file
            // answered to the POST would leave the form, and any earlier "not right", on screen);
            // a program posting the password gets the file itself.
            if (request.headers['sec-fetch-mode'] === 'navigate') {
              return html(reply, 200, startingPage(facts, action));
            }
          }
        } else if (row.password_hash !== null) {
          if (!(await links.hasGrant(row, cookieOf(request))))
            return html(reply, 200, passwordPage(facts, action));
        } else if (row.max_downloads !== null && request.headers.range === undefined) {
          return html(reply, 200, landingPage(facts, action, row.max_downloads - row.downloads));
        }
        handedOff = true;
        return await download(request, reply, mode, row, store, info, {
          path: action,
          continuing,
          granted,
        });
      } finally {
        if (!handedOff) await store.close();
      }
    };

    async function unavailable(request: FastifyRequest, reply: FastifyReply, err: unknown) {
      if (isFerryError(err, 'not_found')) {
        return html(reply, 404, messagePage('File not found', 'The shared file is no longer at its source.'));
      }
      request.log.warn({ err: isFerryError(err) ? err.message : String(err) }, 'share source unreachable');
      return html(
        reply,
        503,
        messagePage(
          'File unavailable',
          'The storage that holds this file cannot be reached right now. Try again later.',
        ),
      );
    }

    /** The link's cookie: the password was given, or a download began (GRANT_MS, see ShareLinks.grant). */
    function setGrantCookie(reply: FastifyReply, grant: string, path: string): void {
      reply.setCookie(COOKIE, grant, {
        path,
        maxAge: 3600,
        httpOnly: true,
        sameSite: 'strict',
        secure: deps.secureCookies,
      });
    }

    /** The file, or the part of it a range asks for; the store closes when the answer ends. */
    async function download(
      request: FastifyRequest,
      reply: FastifyReply,
      mode: Mode,
      row: ShareRow,
      store: Store,
      info: ObjectInfo,
      link: { path: string; continuing: () => Promise<boolean>; granted: boolean },
    ) {
      const closeStore = () => void store.close().catch(() => {});
      const part = fileAnswer(request, reply, info, { ranges: mode !== 'post', path: row.path });
      if (!part) {
        closeStore();
        return reply;
      }
      const { range } = part;
      if (mode === 'head') {
        closeStore();
        return reply.send();
      }
      // What counts as a download (docs/api.md, "Share links"): a response from byte 0; and, on a link
      // with a download limit, a range further on from a client that began no download here, so that
      // a limit cannot be got round by fetching the file in pieces.
      let counted: boolean;
      try {
        counted = !range || range.start === 0 || (row.max_downloads !== null && !(await link.continuing()));
      } catch (err) {
        closeStore();
        throw err;
      }
      let body: Readable | undefined;
      try {
        body = await store.read(row.path, readOptions(part));
        // The source has opened once its first bytes are here: one that fails before them has served
        // nothing, so it must not use up a download (docs/api.md, "Share links").
        await firstBytes(body);
      } catch (err) {
        body?.destroy();
        closeStore();
        clearFileHeaders(reply);
        return unavailable(request, reply, err);
      }
      // Until Fastify takes the stream over, its errors are ours: without a listener, a source that
      // fails now would take the process down.
      let failed: unknown;
      const early = (err: unknown) => {
        failed = err;
      };
      body.once('error', early);
      // The cookie for a download begun here, set once the source is known to be serving.
      let grant: string | undefined;
      // The access log's row of a counted download, finished when the answer ends.
      let access: string | false = false;
      if (counted) {
        access = await links.countDownload(row, request.ip, {
          status: range ? 206 : 200,
          userAgent: request.headers['user-agent'],
        });
        if (!access) {
          body.destroy();
          closeStore();
          clearFileHeaders(reply);
          return html(
            reply,
            410,
            messagePage('Link used up', 'This link has been used as often as it may be.'),
          );
        }
        // A browser that began a download of a limited link resumes it by the link's cookie.
        if (row.max_downloads !== null && !link.granted && !(await links.hasGrant(row, cookieOf(request)))) {
          grant = await links.grant(row);
        }
      }
      if (failed !== undefined || body.destroyed) {
        // It failed while the download was being counted: nothing went out, so the count goes back
        // (the access log keeps the download, with no bytes, not completed).
        if (counted) await links.giveBackDownload(row);
        if (access) await links.endDownload(access, 0, false).catch(() => {});
        closeStore();
        clearFileHeaders(reply);
        return unavailable(request, reply, failed);
      }
      body.off('error', early);
      if (grant !== undefined) setGrantCookie(reply, grant, link.path);
      if (counted) downloads.inc();
      reply.raw.once('close', closeStore);
      if (!access) return sendFileBody(reply, body);
      // Counts the bytes handed to the connection; the row is finished when the answer is whole
      // ('finish') or cut ('close' without it).
      const accessId = access;
      let bytes = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          done(null, chunk);
        },
      });
      pipeline(body, counter, () => {});
      let whole = false;
      reply.raw.once('finish', () => {
        whole = true;
      });
      reply.raw.once('close', () => {
        links.endDownload(accessId, bytes, whole || reply.raw.writableFinished).catch((err: unknown) => {
          request.log.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'share access not finished',
          );
        });
      });
      return sendFileBody(reply, counter);
    }

    app.get('/s/:token', open, handler('get'));
    app.head('/s/:token', open, handler('head'));
    app.post('/s/:token', { ...open, preParsing: beforeBody }, handler('post'));
  };
