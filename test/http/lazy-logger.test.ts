// request.log made on first use (src/http/lazy-logger.ts, docs/performance.md "bench/api"): what it
// writes must be what Fastify's own child logger writes, so an upgrade of fastify or pino that
// changes the child (its bindings, options, levels) fails here rather than in the logs.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { pino } from 'pino';
import { LazyChildLogger } from '../../src/http/lazy-logger.js';

/** The lines one request writes through request.log and reply.log, with the times taken out. */
async function linesOf(options: Pick<FastifyServerOptions, 'childLoggerFactory'>): Promise<object[]> {
  const lines: object[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const { time: _time, responseTime: _took, ...rest } = JSON.parse(line);
        lines.push(rest);
      }
      done();
    },
  });
  const logger = pino({ level: 'debug', base: { service: 'ferry' } }, sink);
  let id = 0;
  const app = Fastify({ loggerInstance: logger, genReqId: () => `req-${++id}`, ...options });
  app.get('/', async (request, reply) => {
    request.log.info({ step: 1 }, 'from the request');
    request.log.debug('below info, still written');
    request.log.trace('below the level, not written');
    reply.log.warn({ err: 'x' }, 'from the reply');
    request.log.child({ part: 'inner' }).info('from a child of the child');
    return { level: request.log.level };
  });
  app.get('/quiet', async () => 'nothing logged');
  const answer = await app.inject({ url: '/' });
  lines.push(answer.json());
  await app.inject({ url: '/quiet' });
  await app.close();
  return lines;
}

test('request.log made lazily writes the lines, with the fields, that Fastify’s own child logger writes', async () => {
  const own = await linesOf({});
  const lazy = await linesOf({
    childLoggerFactory: (logger, bindings, options) => new LazyChildLogger(logger, bindings, options),
  });
  assert.ok(own.some((line) => 'reqId' in line && (line as { msg?: string }).msg === 'from the request'));
  assert.deepEqual(lazy, own);
});
