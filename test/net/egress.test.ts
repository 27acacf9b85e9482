// The egress guard (docs/api.md, "Metadata" and "Move, remove, pull"): address classification, the allow
// list, and the guard on real connections through each of its transports (node http/https agents, undici
// dispatcher), including host names that resolve to loopback and redirects to a refused address.
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Agent, fetch, request } from 'undici';
import { isFerryError } from '../../src/errors.js';
import { classifyAddress, createEgress, type Egress } from '../../src/net/egress.js';
import { waitUntil } from '../support/wait.js';

describe('address classification', () => {
  test('public unicast addresses are public', () => {
    for (const ip of [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '192.0.3.1',
      '2606:4700:4700::1111',
      '2001:4860:4860::8888',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
    ]) {
      assert.equal(classifyAddress(ip), undefined, ip);
    }
  });

  test('non-public IPv4 ranges are named', () => {
    const cases: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.255.255.254', /loopback/],
      ['10.1.2.3', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.168.1.1', /private/],
      ['169.254.169.254', /link-local/],
      ['100.64.0.1', /CGNAT/],
      ['100.127.255.255', /CGNAT/],
      ['0.0.0.0', /unspecified/],
      ['255.255.255.255', /broadcast/],
      ['224.0.0.1', /multicast/],
      ['239.255.255.250', /multicast/],
      ['192.0.2.1', /documentation/],
      ['198.51.100.7', /documentation/],
      ['203.0.113.9', /documentation/],
      ['198.18.0.1', /benchmarking/],
      ['240.0.0.1', /reserved/],
      ['192.0.0.8', /IETF/],
    ];
    for (const [ip, kind] of cases) assert.match(classifyAddress(ip) ?? 'public', kind, ip);
  });

  test('non-public IPv6 ranges are named, including IPv4 carried inside IPv6', () => {
    const cases: [string, RegExp][] = [
      ['::1', /loopback/],
      ['[::1]', /loopback/],
      ['::', /unspecified/],
      ['fe80::1', /link-local/],
      ['fe80::1%eth0', /link-local/],
      ['fc00::1', /unique-local/],
      ['fd12:3456:789a::1', /unique-local/],
      ['ff02::1', /multicast/],
      ['2001:db8::1', /documentation/],
      ['::ffff:127.0.0.1', /IPv4-mapped loopback/],
      ['::ffff:7f00:1', /IPv4-mapped loopback/],
      ['::ffff:10.0.0.1', /IPv4-mapped private/],
      ['::ffff:169.254.169.254', /IPv4-mapped link-local/],
      ['64:ff9b::a00:1', /NAT64 private/],
      ['2002:7f00:1::', /6to4 loopback/],
      ['2001::1', /IETF/],
      ['::127.0.0.1', /reserved/],
      ['100::1', /discard/],
      ['4000::1', /reserved/],
    ];
    for (const [ip, kind] of cases) assert.match(classifyAddress(ip) ?? 'public', kind, ip);
  });

  test('anything that is not an IP address is not public', () => {
    assert.equal(classifyAddress('example.com'), 'not an IP address');
    assert.equal(classifyAddress('1.2.3'), 'not an IP address');
    assert.equal(classifyAddress('1.2.3.256'), 'not an IP address');
  });
});

describe('the allow list', () => {
  const refused = (egress: Egress, address: string, host?: string) =>
    assert.throws(
      () => egress.assertAllowed(address, host),
      (err: unknown) => isFerryError(err, 'invalid') && /is not allowed/.test(err.message),
      `${host ?? ''} ${address} should be refused`,
    );

  test('with an empty list only public addresses pass, and the refusal names host and address', () => {
    const egress = createEgress([]);
    egress.assertAllowed('8.8.8.8');
    refused(egress, '127.0.0.1');
    refused(egress, '::1');
    assert.throws(
      () => egress.assertAllowed('10.0.0.5', 'files.internal'),
      (err: unknown) =>
        isFerryError(err, 'invalid') &&
        err.message.startsWith('egress to files.internal (10.0.0.5) is not allowed'),
    );
  });

  test('a CIDR entry allows its range, and an IPv4 entry covers IPv4-mapped IPv6 too', () => {
    const egress = createEgress(['127.0.0.0/8', '10.1.0.0/16']);
    egress.assertAllowed('127.0.0.1');
    egress.assertAllowed('127.9.9.9');
    egress.assertAllowed('::ffff:127.0.0.1');
    egress.assertAllowed('10.1.200.3');
    refused(egress, '10.2.0.1');
    refused(egress, '::1');
    refused(egress, '192.168.0.1');
  });

  test('an IPv6 CIDR or a bare address allows exactly that', () => {
    const egress = createEgress(['::1/128', '192.168.5.5', 'fd00::/8']);
    egress.assertAllowed('::1');
    egress.assertAllowed('[::1]');
    egress.assertAllowed('192.168.5.5');
    egress.assertAllowed('fd12::1');
    refused(egress, '192.168.5.6');
    refused(egress, '127.0.0.1');
    refused(egress, 'fc00::1');
  });

  test('a host name entry allows whatever that name resolves to, and only that name', () => {
    const egress = createEgress(['minio.internal']);
    egress.assertAllowed('10.0.0.9', 'minio.internal');
    egress.assertAllowed('10.0.0.9', 'MINIO.internal.');
    refused(egress, '10.0.0.9', 'other.internal');
    refused(egress, '10.0.0.9');
  });

  test('malformed entries are rejected when the guard is built', () => {
    assert.throws(() => createEgress(['10.0.0.0/33']), /bad prefix length/);
    assert.throws(() => createEgress(['10.0.0.0/x']), /bad prefix length/);
    assert.throws(() => createEgress(['not a host!']), /neither a CIDR nor a host name/);
    assert.doesNotThrow(() => createEgress(['', ' 127.0.0.1 ', 'localhost']));
  });
});

describe('the guarded lookup', () => {
  const lookup = (egress: Egress, host: string, all: boolean) =>
    new Promise<unknown>((resolve, reject) => {
      egress.lookup(host, { all }, (err, address) => (err ? reject(err) : resolve(address)));
    });

  test('a host name resolving to loopback is refused, in both lookup forms', async () => {
    const egress = createEgress([]);
    for (const all of [false, true]) {
      await assert.rejects(lookup(egress, 'localhost', all), (err: unknown) => {
        assert.ok(isFerryError(err, 'invalid'));
        assert.match(err.message, /^egress to localhost \(.+\) is not allowed: loopback address/);
        return true;
      });
    }
  });

  test('allowed by name or by range, the lookup answers as dns.lookup does', async () => {
    for (const egress of [createEgress(['localhost']), createEgress(['127.0.0.0/8', '::1/128'])]) {
      const one = await lookup(egress, 'localhost', false);
      assert.equal(typeof one, 'string');
      const all = (await lookup(egress, 'localhost', true)) as { address: string }[];
      assert.ok(Array.isArray(all) && all.length > 0);
    }
  });
});

describe('guarded connections', () => {
  let server: http.Server;
  let port: number;
  let redirectTo = '';

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: redirectTo });
        res.end();
        return;
      }
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const get = (agent: http.Agent, url: string) =>
    new Promise<string>((resolve, reject) => {
      const req = (url.startsWith('https') ? https : http).get(url, { agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
    });

  const isRefusal = (err: unknown) => isFerryError(err, 'invalid') && /is not allowed/.test(err.message);

  test('the http agent refuses an IP-literal loopback host and a name that resolves to loopback', async () => {
    const egress = createEgress([]);
    await assert.rejects(get(egress.httpAgent, `http://127.0.0.1:${port}/`), isRefusal);
    await assert.rejects(get(egress.httpAgent, `http://localhost:${port}/`), isRefusal);
    await assert.rejects(get(egress.httpAgent, `http://[::ffff:127.0.0.1]:${port}/`), isRefusal);
  });

  test('the https agent refuses before any TLS handshake', async () => {
    const egress = createEgress([]);
    await assert.rejects(get(egress.httpsAgent, 'https://127.0.0.1:1/'), isRefusal);
    await assert.rejects(get(egress.httpsAgent, 'https://localhost:1/'), isRefusal);
  });

  test('the agents connect when the allow list names the address', async () => {
    const egress = createEgress(['127.0.0.0/8', '::1/128']);
    assert.equal(await get(egress.httpAgent, `http://127.0.0.1:${port}/`), 'ok');
    assert.equal(await get(egress.httpAgent, `http://localhost:${port}/`), 'ok');
    egress.httpAgent.destroy();
  });

  test('the undici dispatcher refuses IP literals and names resolving to loopback', async () => {
    const egress = createEgress([]);
    await assert.rejects(request(`http://127.0.0.1:${port}/`, { dispatcher: egress.dispatcher }), isRefusal);
    await assert.rejects(request(`http://localhost:${port}/`, { dispatcher: egress.dispatcher }), isRefusal);
    await assert.rejects(
      fetch(`http://127.0.0.1:${port}/`, { dispatcher: egress.dispatcher }),
      (err: unknown) => isRefusal((err as Error).cause),
    );
  });

  test('a redirect to a refused address is refused even when the first host was allowed', async () => {
    // The first hop is allowed by name; the redirect goes to the same server by IP literal, which is not.
    const egress = createEgress(['localhost']);
    redirectTo = `http://127.0.0.1:${port}/`;
    assert.equal(
      await (await fetch(`http://localhost:${port}/`, { dispatcher: egress.dispatcher })).text(),
      'ok',
    );
    await assert.rejects(
      fetch(`http://localhost:${port}/redirect`, { dispatcher: egress.dispatcher }),
      (err: unknown) => isRefusal((err as Error).cause),
    );
  });
});

describe("a store's own connections (connect with trusted origins)", () => {
  let server: http.Server;
  let port: number;

  before(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const isRefusal = (err: unknown) => isFerryError(err, 'invalid') && /is not allowed/.test(err.message);

  test('a trusted origin is reached whatever its address; another port or name of that host is checked', async () => {
    const egress = createEgress([]);
    const agent = new Agent({ connect: egress.connect([`http://127.0.0.1:${port}/api`]) });
    try {
      const res = await request(`http://127.0.0.1:${port}/x`, { dispatcher: agent });
      assert.equal(await res.body.text(), 'ok');
      await assert.rejects(request(`http://localhost:${port}/x`, { dispatcher: agent }), isRefusal);
      await assert.rejects(request(`http://127.0.0.1:${port + 1}/x`, { dispatcher: agent }), isRefusal);
      await assert.rejects(request(`https://127.0.0.1:${port}/x`, { dispatcher: agent }), isRefusal);
    } finally {
      await agent.close();
    }
  });

  test('without trusted origins every connection is checked, the allow list applying', async () => {
    const agent = new Agent({ connect: createEgress(['127.0.0.1']).connect([]) });
    try {
      assert.equal(
        await (await request(`http://127.0.0.1:${port}/`, { dispatcher: agent })).body.text(),
        'ok',
      );
      await assert.rejects(request(`http://127.0.0.2:${port}/`, { dispatcher: agent }), isRefusal);
    } finally {
      await agent.close();
    }
  });
});

describe('kept-alive connections', () => {
  test('an idle connection is closed a second before the server’s Keep-Alive timeout, never reused as it closes', async () => {
    // A server that says it closes idle connections after 3 s (`Keep-Alive: timeout=3`). Reusing a
    // connection at the moment the server closes it fails the request (ECONNRESET): the agent must let
    // it go first, at 2 s. This server never closes one itself, so a close it sees can only be the
    // client's; the client's idle timer is read from its socket rather than measured.
    const server = http.createServer((_req, res) => {
      res.setHeader('Keep-Alive', 'timeout=3');
      res.end('ok');
    });
    server.keepAliveTimeout = 0;
    const closedByClient = new Promise<void>((resolve) =>
      server.on('connection', (socket) => socket.on('end', () => resolve())),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const egress = createEgress(['127.0.0.1/32']);
    try {
      await new Promise<void>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/', agent: egress.httpAgent }, (res) => {
            assert.equal(res.headers['keep-alive'], 'timeout=3');
            res.resume();
            res.on('end', () => resolve());
          })
          .on('error', reject);
      });
      // The socket goes back to the pool once the response has ended (on a later tick).
      const [idle] = await waitUntil(
        () => {
          const free = Object.values(egress.httpAgent.freeSockets).flat();
          return free.length > 0 ? free : undefined;
        },
        { what: 'the socket to return to the pool' },
      );
      assert.equal(idle?.timeout, 2000, 'the idle timer is a second short of the server’s 3 s');
      await closedByClient;
      await waitUntil(() => Object.values(egress.httpAgent.freeSockets).flat().length === 0, {
        what: 'the closed socket to leave the pool',
      });
    } finally {
      egress.httpAgent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
