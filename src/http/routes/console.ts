// The web console (docs/console.md): its page at / and its files under /ui/, built into dist/ui/ by
// scripts/build-ui.mjs. Public, like the share pages: everything the console does goes through the
// authenticated API. A strict Content-Security-Policy allows nothing but this origin's own script,
// style and API, and no framing; files named by their content hash are cached for good, the page is
// revalidated; each goes gzipped to clients that accept it (the build keeps a .gz of each).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** dist/ui of this checkout, from src/http/routes (tsx) and dist/http/routes (built) alike. */
export const CONSOLE_DIR = new URL('../../../dist/ui/', import.meta.url).pathname;

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | undefined;
}

async function loadAssets(dir: string): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  for (const name of await readdir(dir)) {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (!type) continue;
    const gzip = await readFile(join(dir, `${name}.gz`)).catch(() => undefined);
    assets.set(name, { type, body: await readFile(join(dir, name)), gzip });
  }
  return assets;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, cache: string) {
  reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', cache)
    .header('vary', 'accept-encoding')
    .type(asset.type);
  const accepts = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (asset.gzip && accepts) return reply.header('content-encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}

export const consoleRoutes =
  (dir: string = CONSOLE_DIR): FastifyPluginAsync =>
  async (app) => {
    // Read once, at the first request: a server started before a build still serves the new one.
    let assets: Promise<Map<string, Asset>> | undefined;
    const load = () => {
      assets ??= loadAssets(dir).catch(() => {
        assets = undefined;
        return new Map<string, Asset>();
      });
      return assets;
    };
    const open = { config: { public: true }, schema: { hide: true } };

    app.get('/', open, async (request, reply) => {
      const index = (await load()).get('index.html');
      if (!index) {
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The web console is not built: run `npm run build`.');
      }
      return send(request, reply, index, 'no-cache');
    });

    // Browsers ask every origin for /favicon.ico; without this it was a 401 in the console of every
    // page ferry serves (docs/api.md, "Service endpoints"). No icon: 204, cached for a day.
    app.get('/favicon.ico', open, async (_request, reply) =>
      reply.code(204).header('cache-control', 'public, max-age=86400').send(),
    );

    app.get('/ui/*', open, async (request, reply) => {
      const name = (request.params as { '*': string })['*'];
      const asset = name === 'index.html' ? undefined : (await load()).get(name);
      if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
      return send(request, reply, asset, 'public, max-age=31536000, immutable');
    });
  };
