// The headers every answer of a stored file or a share page carries (docs/api.md, "Share links" and
// "Files through ferry"): a stored file is served with the type it was stored with, so HTML or SVG
// someone uploaded must not run as this origin's page. The policy allows no script, frame, plugin or
// fetch (a page's own stylesheet only, for the share pages), the browser may not guess another type
// than the one sent, and no Referer carries a share link's token away. Nothing is kept by a cache.
import type { FastifyReply } from 'fastify';

export const FILE_CSP =
  "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', FILE_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cache-control', 'no-store');
}
