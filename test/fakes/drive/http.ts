// Response helpers of the fake Drive: JSON bodies, partial responses and Google's error shape.
// Error shape: https://developers.google.com/drive/api/guides/handle-errors
//   {"error": {"code": 404, "message": "File not found: …", "errors": [{"domain", "reason", "message"}]}}
// The bodies are filled in from the recorded answers in ./fixtures.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { googleError, sendGoogleError } from '../google.js';
import { parseJsonObject, sendJson } from '../server.js';
import { applyFields, FieldsError, parseFields } from './fields.js';
import type { DriveState } from './state.js';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  body: Buffer;
  state: DriveState;
  /** Origin the fake listens on, for Location headers of resumable sessions. */
  origin: string;
  /** Largest page files.list answers, whatever pageSize asks. */
  maxPageSize: number;
  /** An upload's media as received: with a byte flipped when a test armed a corruption (FakeServer.tamper). */
  tamper: (media: Buffer) => Buffer;
}

export { googleError, sendJson };

export function sendError(
  res: ServerResponse,
  status: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): undefined {
  sendGoogleError('drive', res, status, reason, message, headers);
}

export function notFound(res: ServerResponse, id: string): undefined {
  sendError(res, 404, 'notFound', `File not found: ${id}.`);
}

/** Answers with the resource cut down to the `fields` parameter (or the API's default fields). */
export function sendResource(
  ctx: RouteContext,
  status: number,
  resource: unknown,
  defaults: string,
): undefined {
  let selected: unknown;
  try {
    selected = applyFields(resource, parseFields(ctx.url.searchParams.get('fields') ?? defaults));
  } catch (err) {
    if (err instanceof FieldsError) {
      sendError(ctx.res, 400, 'invalidParameter', `Invalid field selection ${err.message}`);
      return;
    }
    throw err;
  }
  sendJson(ctx.res, status, selected);
}

/** The JSON body of a request, or undefined (after answering 400) when it is not JSON. */
export function jsonBody(ctx: RouteContext): Record<string, unknown> | undefined {
  const parsed = parseJsonObject(ctx.body);
  if (parsed === undefined) sendError(ctx.res, 400, 'parseError', 'Parse Error');
  return parsed;
}

export const FILE_DEFAULT_FIELDS = 'kind,id,name,mimeType';
