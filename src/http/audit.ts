// The audit context of a request (docs/api.md, "Audit log"): its workspace and key, the client's address
// (request.ip, as share links and rate limits take it) and its user agent.
// Routes that change something pass it to the domain, which records the action in the change's
// transaction (src/domain/audit/audit.ts).
import type { FastifyRequest } from 'fastify';
import type { AuditContext } from '../domain/audit/audit.js';
import { principalOf } from './auth.js';

export function auditOf(request: FastifyRequest): AuditContext {
  const principal = principalOf(request);
  return {
    workspaceId: principal.workspaceId,
    keyId: principal.keyId,
    ip: request.ip,
    userAgent: request.headers['user-agent'],
  };
}
