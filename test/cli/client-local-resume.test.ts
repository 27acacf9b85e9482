// Downloads that stop halfway (docs/cli.md, "Copying files to and from this computer"): a real `ferry`
// process against a ferry service in this process, through test/support/fault-proxy.ts, which cuts the
// answer partway; on both databases. The same command again continues from the partial file; a remote
// file that changed in between comes whole from the start; a folder with one failing file gets the
// others and exits 6 naming it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { deferred } from '../support/deferred.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';
import { ferry } from './run.js';
import { ok, type Service, startService } from './service.js';

await eachDatabase('ferry client, resumed downloads', (database) => {
  let s: Service;
  let proxy: FaultProxy;
  before(async () => {
    s = await startService(database);
    proxy = await startFaultProxy(s.url);
  });
  after(async () => {
    await proxy.close();
    await s.close();
  });

  test('a cut download continues from its partial file with Range; a changed file starts again; failures are listed with exit 6', async () => {
    const { run, env } = await s.workspace();
    const viaProxy = { ...env, FERRY_URL: proxy.url };
    const label = await s.location(run);
    const first = randomBytes(4 * 1024 * 1024);
    const bucket = await seedBucket(s.client, {
      'big.bin': first,
      'f/a.txt': 'a',
      'f/b.txt': 'b',
      'f/c.txt': 'c',
    });
    const target = join(s.home, unique('big'));
    const partial = `${target}.ferry-partial`;

    // HEAD passes; the GET sends part of its body, which reaches the partial file, then is cut.
    proxy.reset();
    proxy.passNext(1);
    const cutNow = deferred();
    proxy.dropNext(1, cutNow.promise);
    const running = ferry(['cp', `${label}:${bucket}/big.bin`, target], { env: viaProxy });
    await waitUntil(() => existsSync(partial) && statSync(partial).size > 0, {
      what: 'the first bytes on disk',
    });
    cutNow.resolve();
    const cut = await running;
    assert.equal(cut.code, 1, cut.stderr);
    assert.match(
      cut.stderr,
      new RegExp(
        `^ferry: ${label}:${bucket}/big\\.bin: the download stopped after \\d+ bytes .*; run the same command again to continue from there\\n$`,
      ),
    );
    const kept = statSync(partial).size;
    assert.ok(kept > 0 && kept < first.length, `${kept} bytes kept; ${cut.stderr}`);
    assert.equal(existsSync(target), false, 'nothing in place until it is whole');

    const again = ok(await ferry(['cp', `${label}:${bucket}/big.bin`, target, '--json'], { env: viaProxy }));
    const summary = JSON.parse(again.stdout) as { resumed?: Array<{ path: string; from_byte: number }> };
    assert.deepEqual(summary.resumed, [{ path: target, from_byte: kept }]);
    assert.deepEqual(readFileSync(target), first);
    assert.equal(existsSync(partial), false);
    assert.equal(existsSync(`${partial}.json`), false);

    // Cut again, then the remote file changes (same size, other bytes): the re-run starts from byte 0.
    const second = join(s.home, unique('big'));
    proxy.reset();
    proxy.passNext(1);
    const cutAgain = deferred();
    proxy.dropNext(1, cutAgain.promise);
    const stopped = ferry(['cp', `${label}:${bucket}/big.bin`, second], { env: viaProxy });
    await waitUntil(
      () => existsSync(`${second}.ferry-partial`) && statSync(`${second}.ferry-partial`).size > 0,
      {
        what: 'the first bytes on disk',
      },
    );
    cutAgain.resolve();
    assert.equal((await stopped).code, 1);
    const changed = randomBytes(first.length);
    await s.client.send(new PutObjectCommand({ Bucket: bucket, Key: 'big.bin', Body: changed }));
    const fresh = ok(await ferry(['cp', `${label}:${bucket}/big.bin`, second, '--json'], { env: viaProxy }));
    assert.equal((JSON.parse(fresh.stdout) as { resumed?: unknown }).resumed, undefined);
    assert.deepEqual(readFileSync(second), changed, 'the new file whole, not a splice of two versions');

    // A folder where one file fails: the others arrive, the failure is named, exit 6.
    proxy.reset();
    proxy.failWhen((r) => r.method === 'GET' && r.url.endsWith('/f/b.txt'), {
      status: 502,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: 502, message: 'the provider failed' }),
    });
    const folder = join(s.home, unique('f'));
    const partly = await ferry(['cp', `${label}:${bucket}/f/`, folder], { env: viaProxy });
    assert.equal(partly.code, 6, partly.stderr);
    assert.match(partly.stdout, /^downloaded 2 files, 2 B in .*; 1 failed$/m);
    assert.equal(
      partly.stderr,
      `ferry: 1 of 3 files failed:\n  ${label}:${bucket}/f/b.txt: the provider failed\n`,
    );
    assert.equal(readFileSync(join(folder, 'a.txt'), 'utf8'), 'a');
    assert.equal(readFileSync(join(folder, 'c.txt'), 'utf8'), 'c');
    assert.equal(existsSync(join(folder, 'b.txt')), false);
    // The same command again fetches what is missing.
    ok(await ferry(['cp', `${label}:${bucket}/f/`, folder], { env: viaProxy }));
    assert.equal(readFileSync(join(folder, 'b.txt'), 'utf8'), 'b');
  });
});
