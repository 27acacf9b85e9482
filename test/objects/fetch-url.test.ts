// openUrl and checkPullUrl against node:http servers of our own on loopback: one egress that allows
// 127.0.0.1/32 (the happy paths) and one that allows nothing (the guard refuses loopback). Each server
// route stands for what a real web server answers: files, redirects, errors, throttling.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { isFerryError } from '../../src/errors.js';
import { createEgress } from '../../src/net/egress.js';
import { checkPullHost, checkPullUrl, nameFrom, openUrl } from '../../src/objects/fetch-url.js';

const FILE = randomBytes(300 * 1024);
const allowed = createEgress(['127.0.0.1/32']);
const guarded = createEgress([]);

let server: http.Server;
let base: string;
/** A second server on another loopback address, which `allowed` does not allow. */
let other: http.Server;
let otherBase: string;

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  switch (url.pathname) {
    case '/files/report%202024.bin':
    case '/files/plain.bin':
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': FILE.length });
      res.end(FILE);
      return;
    case '/chunked.txt':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.write('hello ');
      res.end('world');
      return;
    case '/':
      res.writeHead(200, { 'content-length': 2 });
      res.end('ok');
      return;
    case '/empty.bin':
      res.writeHead(200, { 'content-length': 0 });
      res.end();
      return;
    case '/encoding':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(String(req.headers['accept-encoding']));
      return;
    case '/relative':
      res.writeHead(302, { location: 'files/plain.bin?sig=abc' });
      res.end();
      return;
    case '/absolute':
      res.writeHead(301, { location: `${base}/relative` });
      res.end();
      return;
    case '/to-other':
      res.writeHead(302, { location: `${otherBase}/files/plain.bin` });
      res.end();
      return;
    case '/to-ftp':
      res.writeHead(302, { location: 'ftp://example.com/file' });
      res.end();
      return;
    case '/loop':
      res.writeHead(302, { location: '/loop' });
      res.end();
      return;
    case '/no-location':
      res.writeHead(302);
      res.end();
      return;
    case '/cut': {
      // Promises the whole file, sends half, then drops the connection.
      res.writeHead(200, { 'content-length': FILE.length });
      res.write(FILE.subarray(0, FILE.length / 2), () => res.socket?.destroy());
      return;
    }
    case '/stall':
      // Promises the whole file, sends a little, then neither sends more nor closes.
      res.writeHead(200, { 'content-length': FILE.length });
      res.write(FILE.subarray(0, 1000));
      return;
    case '/trickle': {
      // A byte every 50 ms: slow, but never silent for long.
      res.writeHead(200, { 'content-length': 30 });
      let sent = 0;
      const timer = setInterval(() => {
        res.write('x');
        if (++sent === 30) {
          clearInterval(timer);
          res.end();
        }
      }, 50);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case '/silent':
      // Reads the request and never answers.
      return;
    default: {
      const status = /^\/status\/(\d+)$/.exec(url.pathname);
      if (status) {
        const headers: Record<string, string> = {};
        const retryAfter = url.searchParams.get('retry-after');
        if (retryAfter !== null) headers['retry-after'] = retryAfter;
        res.writeHead(Number(status[1]), headers);
        res.end('error page');
        return;
      }
      res.writeHead(404);
      res.end('not here');
    }
  }
}

async function listen(srv: http.Server, host: string): Promise<string> {
  await new Promise<void>((resolve) => srv.listen(0, host, resolve));
  return `http://${host}:${(srv.address() as AddressInfo).port}`;
}

before(async () => {
  server = http.createServer(route);
  base = await listen(server, '127.0.0.1');
  other = http.createServer(route);
  otherBase = await listen(other, '127.0.0.2');
});

after(async () => {
  for (const srv of [server, other]) {
    srv.closeAllConnections();
    await new Promise((resolve) => srv.close(resolve));
  }
});

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('openUrl', () => {
  test('streams the file, with size from Content-Length, the type, and the decoded last segment as name', async () => {
    const fetched = await openUrl(`${base}/files/report%202024.bin`, allowed);
    assert.equal(fetched.size, FILE.length);
    assert.equal(fetched.name, 'report 2024.bin');
    assert.equal(fetched.mimeType, 'application/octet-stream');
    assert.equal(sha(await readAll(fetched.body)), sha(FILE));
  });

  test('a body without Content-Length has no size', async () => {
    const fetched = await openUrl(`${base}/chunked.txt`, allowed);
    assert.equal(fetched.size, undefined);
    assert.equal(fetched.mimeType, 'text/plain; charset=utf-8');
    assert.equal((await readAll(fetched.body)).toString(), 'hello world');
  });

  test('an empty path names the file "download"; a 0-byte file has size 0', async () => {
    const root = await openUrl(`${base}/`, allowed);
    assert.equal(root.name, 'download');
    await readAll(root.body);
    const empty = await openUrl(`${base}/empty.bin`, allowed);
    assert.equal(empty.size, 0);
    assert.equal((await readAll(empty.body)).length, 0);
  });

  test('asks for the bytes as stored (no content coding)', async () => {
    const fetched = await openUrl(`${base}/encoding`, allowed);
    assert.equal((await readAll(fetched.body)).toString(), 'identity');
  });

  test('loopback is refused when FERRY_EGRESS_ALLOW does not name it', async () => {
    await assert.rejects(openUrl(`${base}/files/plain.bin`, guarded), (err: unknown) => {
      assert.ok(isFerryError(err, 'invalid'), String(err));
      assert.match(err.message, /egress to 127\.0\.0\.1 .*not allowed: loopback/);
      return true;
    });
    // The same through a host name that resolves to loopback.
    const named = `${base.replace('127.0.0.1', 'localhost')}/files/plain.bin`;
    await assert.rejects(openUrl(named, guarded), (err: unknown) => isFerryError(err, 'invalid'));
  });

  test('follows relative and absolute redirects; the name comes from the final URL', async () => {
    const fetched = await openUrl(`${base}/absolute`, allowed);
    assert.equal(fetched.name, 'plain.bin');
    assert.equal(sha(await readAll(fetched.body)), sha(FILE));
  });

  test('a redirect to a host the guard does not allow is refused', async () => {
    await assert.rejects(openUrl(`${base}/to-other`, allowed), (err: unknown) => {
      assert.ok(isFerryError(err, 'invalid'), String(err));
      assert.match(err.message, /127\.0\.0\.2/);
      return true;
    });
  });

  test('a redirect to a scheme other than http(s) is refused', async () => {
    await assert.rejects(openUrl(`${base}/to-ftp`, allowed), (err: unknown) => {
      assert.ok(isFerryError(err, 'invalid'), String(err));
      assert.match(err.message, /http or https/);
      return true;
    });
  });

  test('a redirect loop stops after maxRedirects (default 5) as invalid', async () => {
    await assert.rejects(openUrl(`${base}/loop`, allowed), (err: unknown) => {
      assert.ok(isFerryError(err, 'invalid'), String(err));
      assert.match(err.message, /more than 5 redirects/);
      return true;
    });
    await assert.rejects(openUrl(`${base}/absolute`, allowed, { maxRedirects: 1 }), /more than 1 redirects/);
    await assert.rejects(openUrl(`${base}/no-location`, allowed), (err: unknown) =>
      isFerryError(err, 'invalid'),
    );
  });

  test('404 and 410 are not_found; 401 and 403 are invalid (the server refused)', async () => {
    for (const status of [404, 410]) {
      await assert.rejects(openUrl(`${base}/status/${status}`, allowed), (err: unknown) =>
        isFerryError(err, 'not_found'),
      );
    }
    for (const status of [401, 403]) {
      await assert.rejects(openUrl(`${base}/status/${status}`, allowed), (err: unknown) => {
        assert.ok(isFerryError(err, 'invalid'), String(err));
        assert.match(err.message, /the server refused/);
        return true;
      });
    }
    await assert.rejects(openUrl(`${base}/status/400`, allowed), (err: unknown) =>
      isFerryError(err, 'invalid'),
    );
  });

  test('503 and 429 are throttled with Retry-After; other 5xx and 408 are transient', async () => {
    await assert.rejects(openUrl(`${base}/status/503?retry-after=7`, allowed), (err: unknown) => {
      assert.ok(isFerryError(err, 'throttled'), String(err));
      assert.equal(err.retryAfterSeconds, 7);
      return true;
    });
    await assert.rejects(openUrl(`${base}/status/429`, allowed), (err: unknown) => {
      assert.ok(isFerryError(err, 'throttled'), String(err));
      assert.equal(err.retryAfterSeconds, undefined);
      return true;
    });
    for (const status of [500, 502, 504, 408]) {
      await assert.rejects(openUrl(`${base}/status/${status}`, allowed), (err: unknown) =>
        isFerryError(err, 'transient'),
      );
    }
  });

  test('a refused connection is transient', async () => {
    const closed = http.createServer();
    const url = await listen(closed, '127.0.0.1');
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(openUrl(`${url}/x`, allowed), (err: unknown) => isFerryError(err, 'transient'));
  });

  test('a connection cut mid-body fails the stream as transient, never a short file', async () => {
    const fetched = await openUrl(`${base}/cut`, allowed);
    assert.equal(fetched.size, FILE.length);
    await assert.rejects(readAll(fetched.body), (err: unknown) => isFerryError(err, 'transient'));
  });

  test('a body that stalls mid-way fails as transient after the idle bound, never hangs', async () => {
    const fetched = await openUrl(`${base}/stall`, allowed, { timeouts: { headersMs: 10_000, idleMs: 300 } });
    const started = performance.now();
    await assert.rejects(readAll(fetched.body), (err: unknown) => {
      assert.ok(isFerryError(err, 'transient'), String(err));
      assert.match(err.message, /the body stalled \(no byte for 0\.3 s\) after 1000 bytes/);
      return true;
    });
    const took = performance.now() - started;
    // The stall is for good, so only the pause bound ends it; the upper bound is far below the 120 s
    // default that a bound not passed on would fall back to, and far above any pace of the machine.
    assert.ok(took >= 250 && took < 20_000, `took ${Math.round(took)} ms`);
  });

  test('a slow body that keeps moving is not cut by the idle bound: the bound is a pause, not a total', async () => {
    // The body takes 1.5 s in all, past the bound, at a byte every 50 ms, a twentieth of it. undici
    // counts the bound in ticks of about half a second: at 1 s it fires only after two ticks with no
    // byte read, which that trickle cannot leave however the process is stalled (under a second, one
    // stall across a tick could fire it).
    const fetched = await openUrl(`${base}/trickle`, allowed, {
      timeouts: { headersMs: 10_000, idleMs: 1000 },
    });
    assert.equal((await readAll(fetched.body)).toString(), 'x'.repeat(30));
  });

  test('a server that never answers fails as transient after the headers bound', async () => {
    await assert.rejects(
      openUrl(`${base}/silent`, allowed, { timeouts: { headersMs: 300, idleMs: 10_000 } }),
      (err: unknown) => {
        assert.ok(isFerryError(err, 'transient'), String(err));
        assert.match(err.message, /no answer within 0\.3 s/);
        return true;
      },
    );
  });

  test('messages never show the query string (it may hold a signature)', async () => {
    await assert.rejects(openUrl(`${base}/status/500?X-Amz-Signature=s3cr3t`, allowed), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.doesNotMatch(err.message, /s3cr3t/);
      return true;
    });
  });

  test('an abort signal stops the request', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(
      openUrl(`${base}/files/plain.bin`, allowed, { signal: controller.signal }),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.ok(!isFerryError(err), 'an abort is not a failure to classify');
        return true;
      },
    );
  });
});

describe('checkPullUrl', () => {
  test('accepts http and https URLs with a host', () => {
    assert.equal(checkPullUrl('https://example.com/a/b.txt').hostname, 'example.com');
    assert.equal(checkPullUrl('http://203.0.113.9:8080/x').port, '8080');
  });

  test('refuses other schemes, no host, credentials, and non-URLs as invalid', () => {
    for (const url of [
      'ftp://example.com/x',
      'file:///etc/passwd',
      'data:text/plain,hi',
      'javascript:alert(1)',
      'http://',
      'https://user:pass@example.com/x',
      'not a url',
      '/relative/path',
      '',
    ]) {
      assert.throws(
        () => checkPullUrl(url),
        (err: unknown) => isFerryError(err, 'invalid'),
        url,
      );
    }
  });
});

describe('checkPullHost', () => {
  test('refuses a host that resolves to a non-public address, before any connection', async () => {
    await assert.rejects(checkPullHost(new URL('http://localhost/x'), guarded), (err: unknown) =>
      isFerryError(err, 'invalid'),
    );
    await assert.rejects(checkPullHost(new URL('http://10.1.2.3/x'), guarded), (err: unknown) =>
      isFerryError(err, 'invalid'),
    );
    await assert.rejects(checkPullHost(new URL('http://[::1]/x'), guarded), (err: unknown) =>
      isFerryError(err, 'invalid'),
    );
    await checkPullHost(new URL(`${base}/x`), allowed);
    await checkPullHost(new URL('http://93.184.215.14/x'), guarded);
  });
});

describe('nameFrom', () => {
  test('decodes the last segment, keeps a malformed or slash-making escape as written', () => {
    assert.equal(nameFrom(new URL('https://h/a/b%C3%A9%2B.txt?x=1')), 'bé+.txt');
    assert.equal(nameFrom(new URL('https://h/a/100%')), '100%');
    assert.equal(nameFrom(new URL('https://h/a/x%2Fy')), 'x%2Fy');
    assert.equal(nameFrom(new URL('https://h/a/')), 'download');
    assert.equal(nameFrom(new URL('https://h')), 'download');
  });
});
