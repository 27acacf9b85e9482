// A job's report as an HTTP answer (docs/api.md, "Reports"), for every route that serves one (a
// transfer's and a job's, verify's included): NDJSON, or CSV when Accept asks for it, as an attachment,
// streamed a page of rows at a time, and ended with its key (docs/api.md, "Live progress").
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ReportBody } from '../api/streams.js';
import type { KeyWatch } from '../domain/key-watch.js';
import type { JobReports, ReportFormat } from '../domain/transfers/report.js';
import { principalOf } from './auth.js';
import { attachment } from './file-answer.js';
import { errors } from './schemas.js';

export interface ReportDeps {
  reports: JobReports;
  /** A report being streamed ends with its key (docs/api.md, "Live progress"). */
  keyWatch: KeyWatch;
}

/** A report as NDJSON unless the request's Accept asks for text/csv (docs/api.md, "Reports"). */
function reportFormat(request: FastifyRequest): ReportFormat {
  const accept = request.headers.accept ?? '';
  return /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept) ? 'csv' : 'ndjson';
}

/** Both forms of a report in /openapi.json: a body that streams, line by line. */
export const reportResponses = {
  200: {
    description:
      'Every object of the job, in order: one JSON object a line (application/x-ndjson), or CSV with a header row (Accept: text/csv)',
    content: { 'application/x-ndjson': { schema: ReportBody }, 'text/csv': { schema: ReportBody } },
  },
  ...errors(401, 404),
};

/**
 * Streams a report, a page of rows at a time: a client that goes away stops the reading (the stream
 * is destroyed, and with it the generator that reads the pages), and so does the end of its key.
 */
export function sendReport(
  deps: ReportDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  job: { id: string } | undefined,
  name: string,
) {
  const format = reportFormat(request);
  const lines = deps.reports.text(job, format, (count, complete) => {
    if (!complete) request.log.info({ job: job?.id, lines: count }, 'report stopped before its end');
  });
  const out = Readable.from(lines, { objectMode: false });
  const unwatch = deps.keyWatch.watch(principalOf(request).keyId, () => {
    out.destroy();
    reply.raw.destroy();
  });
  reply.raw.once('close', () => {
    unwatch();
    out.destroy();
  });
  return reply
    .header(
      'content-type',
      format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/x-ndjson; charset=utf-8',
    )
    .header('content-disposition', attachment(`${name}.${format === 'csv' ? 'csv' : 'ndjson'}`))
    .header('cache-control', 'no-store')
    .send(out);
}
