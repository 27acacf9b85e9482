// The peer of bench/api: a bare Fastify server (the same Fastify ferry runs, default options, no hooks,
// no logging) answering GET /bare with a fixed body: the bytes of ferry's list of 100 locations, read
// from the file named by BARE_BODY. It is the ceiling for any route that sends those bytes on this
// machine. Plain JavaScript run by node itself, so nothing of the bench's tooling runs in it.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const body = readFileSync(process.env.BARE_BODY, 'utf8');
const app = Fastify();
app.get('/bare', (_request, reply) => {
  reply.type('application/json; charset=utf-8').send(body);
});
await app.listen({ port: Number(process.env.BARE_PORT), host: '127.0.0.1' });
process.send?.('ready');
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
