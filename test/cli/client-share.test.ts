// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): share prints the link once; send shows when its mail goes (words read before
// anything is sent, asked about at a terminal) and until when its link works, in the sender's zone.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';
import { ferry } from './run.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('share prints the link once; shares lists and revokes it; send mails a link and sends show tells its state', async () => {
    const { run, env } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, { 'doc.txt': 'shared text' });
    const shared = await run(
      'share',
      `${label}:${bucket}/doc.txt`,
      '--expires',
      '7d',
      '--max-downloads',
      '2',
      '--password',
      'correct horse',
    );
    ok(shared);
    assert.match(shared.stdout, /^http:\/\/\S+\/s\/[A-Za-z0-9_-]+\n$/);
    const page = json<{ shares: Array<Record<string, unknown>> }>(await run('shares', '--json'));
    assert.equal(page.shares.length, 1);
    assert.equal(page.shares[0]?.has_password, true);
    assert.equal(page.shares[0]?.max_downloads, 2);
    assert.ok(!JSON.stringify(page).includes(shared.stdout.trim()), 'the list never shows the link');
    ok(await run('shares', 'revoke', String(page.shares[0]?.id)));
    assert.ok(
      json<{ shares: Array<{ revoked_at?: string }> }>(await run('shares', '--json')).shares[0]?.revoked_at,
    );
    // A used-up link says so, not "live".
    const once = ok(await run('share', `${label}:${bucket}/doc.txt`, '--max-downloads', '1')).stdout.trim();
    const download = await fetch(`${s.url}${new URL(once).pathname}`, { method: 'POST' });
    assert.equal(download.status, 200);
    assert.equal(await download.text(), 'shared text');
    const listing = ok(await run('shares')).stdout;
    const [usedUp, revoked] = listing.split('\n').slice(1);
    assert.match(String(usedUp), /used up/, listing);
    assert.match(String(revoked), /revoked/, listing);
    assert.doesNotMatch(listing, /live|active/, listing);

    const to = `${unique('ann')}@example.com`;
    const sent = json(
      await run('send', `${label}:${bucket}/doc.txt`, '--to', to, '-m', 'the file', '--json'),
    );
    assert.equal(sent.status, 'queued');
    const mail = await waitUntil(() => s.smtp.received.find((m) => m.envelope.to.includes(to)), {
      what: 'the mail',
    });
    // The service's public URL is an IP address: the mail comes from an address literal, a real address.
    assert.equal(mail.envelope.from, 'ferry@[127.0.0.1]');
    const state = await waitUntil(
      async () => {
        const s = json(await run('sends', 'show', String(sent.id), '--json'));
        return s.status === 'sent' ? s : undefined;
      },
      { what: 'the send to be recorded sent', pauseMs: 200 },
    );
    assert.equal(state.id, sent.id);
    const later = json(
      await run('send', `${label}:${bucket}/doc.txt`, '--to', to, '--at', 'in 2 hours', '--json'),
    );
    assert.equal(later.status, 'scheduled');
    assert.ok(Math.abs(Date.parse(String(later.scheduled_at)) - Date.now() - 7_200_000) < 120_000);
    // ferry sends: id, state, file, recipients count, when; then cancel.
    const sends = ok(await run('sends')).stdout.split('\n');
    assert.match(String(sends[0]), /^ID\s+STATE\s+FILE\s+RECIPIENTS\s+WHEN/);
    assert.match(
      String(sends[1]),
      new RegExp(`^${later.id}\\s+scheduled\\s+${label}/${bucket}/doc\\.txt\\s+1\\s`),
    );
    assert.match(String(sends[2]), new RegExp(`^${sent.id}\\s+sent\\s`));
    assert.match(ok(await run('sends', 'cancel', String(later.id))).stdout, /canceled/);
    assert.equal(json(await run('sends', 'show', String(later.id), '--json')).status, 'canceled');
    const again = await run('sends', 'cancel', String(later.id));
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already canceled/);

    // Words are read before anything is sent and the moment shown, in the sender's zone with its weekday;
    // the confirmation says when the mail goes and until when its link works (7 days on by default).
    // The coming Friday in Tokyo, as docs/api.md says (`next friday` said on a Friday there is a week
    // on, whatever the hour): read before and after the command, which may straddle Tokyo's midnight.
    const comingFriday = () => {
      const [y, m, d] = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Tokyo' })
        .format(new Date())
        .split('-')
        .map(Number) as [number, number, number];
      const today = new Date(Date.UTC(y, m - 1, d));
      const ahead = (5 - today.getUTCDay() + 7) % 7 || 7;
      return new Date(today.getTime() + ahead * 86_400_000).toISOString().slice(0, 10);
    };
    const fridays = [comingFriday()];
    const friday = await run(
      ...[
        'send',
        `${label}:${bucket}/doc.txt`,
        '--to',
        to,
        '--at',
        'next friday',
        '--timezone',
        'Asia/Tokyo',
      ],
    );
    ok(friday);
    const shown = /^the mail goes out (Fri (\d{4}-\d\d-\d\d) 09:00 \(Asia\/Tokyo\))\n$/.exec(friday.stderr);
    assert.ok(shown, friday.stderr);
    fridays.push(comingFriday());
    assert.ok(
      fridays.includes(shown[2] as string),
      `the coming Friday (${fridays.join(' or ')}): ${shown[1]}`,
    );
    const due = Date.parse(`${shown[2]}T09:00:00+09:00`);
    assert.ok(due > Date.now(), `in the future: ${shown[1]}`);
    const weekOn = new Date(due + 7 * 86_400_000).toISOString().slice(0, 10);
    assert.match(
      friday.stdout,
      new RegExp(
        `^send \\S+ scheduled for ${String(shown[1]).replace(/[()]/g, '\\$&')}; its link works until Fri ${weekOn} 09:00 \\(Asia/Tokyo\\)\n`,
      ),
    );
    const now = ok(await run('send', `${label}:${bucket}/doc.txt`, '--to', to, '--timezone', 'UTC'));
    assert.match(
      now.stdout,
      /^send \S+ queued: the mail goes now; its link works until \w{3} \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\)\n/,
    );
    // At a terminal, words are asked about before the send is made: n sends nothing.
    const count = () => run('sends', '--json').then((r) => json<{ sends: unknown[] }>(r).sends.length);
    const made = await count();
    const asked = await ferry(['send', `${label}:${bucket}/doc.txt`, '--to', to, '--at', 'tomorrow 9am'], {
      env,
      tty: true,
      stdin: 'n\n',
    });
    assert.equal(asked.code, 0, asked.stdout);
    assert.match(asked.stdout, /the mail goes out \w{3} \d{4}-\d\d-\d\d 09:00 \(\S+\)\r?\n/);
    assert.match(asked.stdout, /send it then\? \[y\/N\] /);
    assert.match(asked.stdout, /nothing sent/);
    assert.equal(await count(), made, 'no send was made');
    const unread = await run('send', `${label}:${bucket}/doc.txt`, '--to', to, '--at', 'the day after never');
    assert.equal(unread.code, 2, unread.stderr);
    assert.match(unread.stderr, /^ferry: --at "the day after never"/);
  });
});
