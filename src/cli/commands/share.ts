// `ferry share` (a link to one file), `ferry shares` (list, revoke), `ferry send` (mail a link, now or
// later) and `ferry sends` (list, show, cancel) (docs/api.md, "Share links" and "Send"). A password given as a bare
// `--password` is read without echo (or from stdin), so it stays out of the process list.
import type { AnySend, BodyOf } from '../../api/routes.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { usageError } from '../exit.js';
import { expiresAt } from '../expiry.js';
import { fields, localZone, table, time, zonedTime } from '../format.js';
import { confirm, interactive, secretLine } from '../prompt.js';
import { literalFor, literalOption, slashForm } from '../targets.js';

const linkOptions = {
  password: {
    type: 'string',
    describe: 'protect the link; without a value it is asked for (or read from stdin)',
  },
  expires: {
    type: 'string',
    describe:
      'when the link stops working: 30m, 12h, 7d, 2w or an RFC 3339 time (a send’s default: 7 days after its mail)',
  },
} as const;

async function password(value: string | undefined): Promise<{ password?: string }> {
  if (value === undefined) return {};
  const text = value === '' ? await secretLine('password for the link: ') : value;
  if (text === '') throw usageError('the password is empty');
  return { password: text };
}

/**
 * `--at` as the moment the server will schedule (docs/api.md, "Send"), read here by the server's own
 * reading of the words (loaded only when --at is given), so that it can be shown before anything is
 * sent; its refusals are usage errors naming --at.
 */
async function whenToSend(words: string, zone: string): Promise<string> {
  const { resolveSchedule } = await import('../../domain/sends/schedule.js');
  try {
    return new Date(resolveSchedule(words, Date.now(), zone)).toISOString();
  } catch (err) {
    throw usageError(
      (err as Error).message.replace(/^scheduledAt\b/, '--at').replace(/^timezone\b/, '--timezone'),
    );
  }
}

function showSend(s: AnySend): string {
  return fields([
    ['send', s.id],
    ['status', s.status],
    ['file', s.source],
    ['recipients', s.recipients === undefined ? undefined : String(s.recipients)],
    ['created', s.created_at ? time(s.created_at) : undefined],
    ['scheduled', s.scheduled_at ? time(s.scheduled_at) : undefined],
    ['sent', s.sent_at ? time(s.sent_at) : undefined],
    ['refused', s.refused?.join(', ')],
    ['error', s.error],
  ]);
}

/** When a send went, or is to go, or was made. */
const sendWhen = (s: AnySend) => time(s.sent_at ?? s.scheduled_at ?? s.created_at);

async function listSends(ctx: Context, argv: { limit: number; cursor?: string | undefined }): Promise<void> {
  const page = await ctx
    .api()
    .get('/v1/sends', { query: { limit: String(argv.limit), cursor: argv.cursor || undefined } });
  ctx.print(page, () =>
    page.sends.length === 0
      ? 'no sends'
      : table(page.sends, [
          { header: 'ID', value: (s) => s.id },
          { header: 'STATE', value: (s) => s.status },
          { header: 'FILE', value: (s) => s.source ?? '' },
          { header: 'RECIPIENTS', value: (s) => String(s.recipients ?? ''), right: true },
          { header: 'WHEN', value: sendWhen },
        ]),
  );
  if (page.next_cursor && !ctx.json) ctx.note(`more: ferry sends --cursor ${page.next_cursor}`);
}

async function listShares(ctx: Context, argv: { limit: number; cursor?: string | undefined }): Promise<void> {
  const page = await ctx
    .api()
    .get('/v1/shares', { query: { limit: String(argv.limit), cursor: argv.cursor || undefined } });
  ctx.print(page, () =>
    page.shares.length === 0
      ? 'no shares'
      : table(page.shares, [
          { header: 'ID', value: (s) => s.id },
          { header: 'SOURCE', value: (s) => s.source },
          {
            header: 'DOWNLOADS',
            value: (s) => `${s.downloads}${s.max_downloads ? `/${s.max_downloads}` : ''}`,
            right: true,
          },
          { header: 'PASSWORD', value: (s) => (s.has_password ? 'yes' : 'no') },
          { header: 'EXPIRES', value: (s) => time(s.expires_at) },
          {
            header: 'STATE',
            value: (s) =>
              s.state === 'revoked' ? `revoked ${time(s.revoked_at)}` : s.state.replace('_', ' '),
          },
        ]),
  );
  if (page.next_cursor && !ctx.json) ctx.note(`more: ferry shares --cursor ${page.next_cursor}`);
}

export function shareCommands(cli: Cli): Cli {
  return cli
    .command(
      'share <path>',
      'make a link to one file and print it (it is shown only this once)',
      (y) =>
        y
          .positional('path', {
            type: 'string',
            demandOption: true,
            describe: 'location:bucket/key, or a pattern matching one file',
          })
          .options(linkOptions)
          .options(literalOption)
          .option('max-downloads', { type: 'number', describe: 'the link works for this many downloads' })
          .example('$0 share photos:my-bucket/report.pdf --expires 7d --password', ''),
      async (argv) => {
        const ctx = contextFor(argv);
        const body: BodyOf<'POST', '/share'> = {
          file: slashForm(argv.path),
          ...(literalFor([argv.path], argv.literal) ? { literal: true } : {}),
          ...(await password(argv.password)),
          ...(argv.expires === undefined ? {} : { expires_at: expiresAt(argv.expires) }),
          ...(argv.maxDownloads === undefined ? {} : { max_downloads: argv.maxDownloads }),
        };
        const r = await ctx.api().send('POST', '/share', { body });
        ctx.print(r, () => r.url);
        if (!ctx.json)
          ctx.note(
            `share ${r.id}${r.expires_at ? `, expires ${time(r.expires_at)}` : ''}; ferry shares revoke ${r.id} ends it`,
          );
      },
    )
    .command('shares', 'share links: list (default), revoke', (y) =>
      y
        .command(
          ['list', '$0'],
          'list share links, newest first',
          (c) =>
            c
              .option('limit', { type: 'number', default: 20, describe: 'how many (1 to 1000)' })
              .option('cursor', { type: 'string', describe: 'the next page' }),
          (argv) => listShares(contextFor(argv), argv),
        )
        .command(
          'revoke <id>',
          'stop a link at once',
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          async (argv) => {
            const ctx = contextFor(argv);
            await ctx.api().send('DELETE', '/v1/shares/{id}', { id: argv.id });
            ctx.print({ revoked: true }, () => `share ${argv.id} revoked`);
          },
        ),
    )
    .command(
      'send <path>',
      'e-mail a link to one file, now or at a time (--at)',
      (y) =>
        y
          .positional('path', {
            type: 'string',
            demandOption: true,
            describe: 'location:bucket/key, or a pattern matching one file',
          })
          .option('to', {
            type: 'string',
            array: true,
            demandOption: true,
            describe: 'recipient (repeatable, up to 50)',
          })
          .option('cc', { type: 'string', array: true, describe: 'copy to (repeatable)' })
          .option('bcc', { type: 'string', array: true, describe: 'blind copy to (repeatable)' })
          .option('reply-to', { type: 'string', array: true, describe: 'reply address (repeatable)' })
          .option('message', {
            alias: 'm',
            type: 'string',
            describe: 'your message, up to 10,000 characters',
          })
          .option('sender-name', {
            type: 'string',
            describe: 'who shares the file, in From and the subject (default: the workspace name)',
          })
          .option('at', {
            type: 'string',
            describe: 'when: ISO 8601 or words ("tomorrow 9am", "in 2 hours", "friday 17:00 EST")',
          })
          .option('timezone', {
            type: 'string',
            describe:
              'IANA zone for --at without one, and for the times shown (default: this computer’s zone)',
          })
          .option('yes', {
            alias: 'y',
            type: 'boolean',
            describe: 'with --at in words: do not ask, at a terminal, whether the time shown is right',
          })
          .options(linkOptions)
          .options(literalOption)
          .example(
            '$0 send photos:my-bucket/q4.pdf --to ann@example.com --at "tomorrow 9am" -m "The Q4 numbers"',
            '',
          ),
      async (argv) => {
        const ctx = contextFor(argv);
        const zone = argv.timezone ?? localZone();
        // One address as itself, several as a list.
        const list = (v: string[]) => (v.length === 1 && v[0] !== undefined ? v[0] : v);
        const at = argv.at === undefined ? undefined : await whenToSend(argv.at, zone);
        if (argv.at !== undefined && at !== undefined) {
          // Shown before anything is sent: words are where a reading can surprise ("next friday").
          ctx.note(`the mail goes out ${zonedTime(at, zone)}`);
          const words = !/^([+-]\d{6}|\d{4})-\d{2}-\d{2}/.test(argv.at.trim());
          if (words && interactive() && !argv.yes && !(await confirm('send it then?'))) {
            ctx.note('nothing sent');
            return;
          }
        }
        const body: BodyOf<'POST', '/send'> = {
          source: slashForm(argv.path),
          ...(literalFor([argv.path], argv.literal) ? { literal: true } : {}),
          to: list(argv.to),
          ...(argv.cc === undefined ? {} : { cc: list(argv.cc) }),
          ...(argv.bcc === undefined ? {} : { bcc: list(argv.bcc) }),
          ...(argv.replyTo === undefined ? {} : { replyTo: list(argv.replyTo) }),
          ...(argv.message === undefined ? {} : { text: argv.message }),
          ...(argv.senderName === undefined ? {} : { sender_name: argv.senderName }),
          // The moment shown above, not the words: the server schedules exactly what was shown.
          ...(at === undefined ? {} : { scheduledAt: at }),
          ...(argv.at === undefined ? {} : { timezone: zone }),
          ...(await password(argv.password)),
          ...(argv.expires === undefined ? {} : { expires_at: expiresAt(argv.expires) }),
        };
        const s = await ctx.api().send('POST', '/send', { body });
        ctx.print(s, () => {
          const when = s.scheduled_at ? ` for ${zonedTime(s.scheduled_at, zone)}` : ': the mail goes now';
          const until = s.expires_at ? `; its link works until ${zonedTime(s.expires_at, zone)}` : '';
          return `send ${s.id} ${s.status}${when}${until}\nferry sends show ${s.id} tells when it went`;
        });
      },
    )
    .command('sends', 'mailed links: list (default), show, cancel', (y) =>
      y
        .command(
          ['list', '$0'],
          'list sends, newest first',
          (c) =>
            c
              .option('limit', { type: 'number', default: 20, describe: 'how many (1 to 1000)' })
              .option('cursor', { type: 'string', describe: 'the next page' }),
          (argv) => listSends(contextFor(argv), argv),
        )
        .command(
          'cancel <id>',
          'cancel a send whose mail has not started (scheduled, or queued and not yet picked up)',
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          async (argv) => {
            const ctx = contextFor(argv);
            const s = await ctx.api().send('POST', '/v1/sends/{id}/cancel', { id: argv.id });
            ctx.print(s, () => `send ${s.id} canceled`);
          },
        )
        .command(
          'show <id>',
          "show a send's status",
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          async (argv) => {
            const ctx = contextFor(argv);
            const s = await ctx.api().get('/v1/sends/{id}', { id: argv.id });
            ctx.print(s, () => showSend(s));
          },
        ),
    );
}
