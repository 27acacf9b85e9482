// HTTP helpers of the fake GCS: reading bodies, answering JSON, and Google's JSON API error body.
// Error shape and reasons: https://cloud.google.com/storage/docs/json_api/v1/status-codes
import type { IncomingMessage, ServerResponse } from 'node:http';

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': String(payload.length),
    ...headers,
  });
  res.end(payload);
}

/** `{"error": {"code", "message", "errors": [{"domain", "reason", "message"}]}}` */
export function sendError(
  res: ServerResponse,
  status: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(
    res,
    status,
    { error: { code: status, message, errors: [{ domain: 'global', reason, message }] } },
    headers,
  );
}

/** Path segments of a raw request path, each percent-decoded (object names encode "/" as %2F). */
export function segments(pathname: string): string[] {
  return pathname
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decodeURIComponent(s));
}
