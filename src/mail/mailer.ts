// Outgoing mail: one pooled nodemailer transporter on FERRY_SMTP_URL for the process, and the message
// a send composes (plain text and HTML, the sender's words escaped). To and cc get the message as it is
// composed; bcc travels in the SMTP envelope only. The Message-ID is derived from the send, so a send
// delivered twice (a crash between the server's acceptance and the database write) carries the same
// one and reads as a duplicate.
import nodemailer, { type Transporter } from 'nodemailer';
import { escapeHtml, humanSize, showBidiControls } from '../display.js';
import type { Secret } from '../secret.js';

export interface OutgoingMail {
  messageId: string;
  /** FERRY_MAIL_FROM: an address, or a name and an address, which are then kept as they are. */
  from: string;
  /** Who shares the file: the send's sender_name or the workspace's name. */
  senderName: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  fileName: string;
  fileSize: number;
  url: string;
  message: string | null;
  expiresAt: number | null;
  hasPassword: boolean;
}

export interface MailResult {
  accepted: string[];
  refused: string[];
  /** The server's last answer. */
  response: string;
}

/**
 * A failure as the server or the connection gave it: `permanent` for a 5xx answer (the send fails),
 * otherwise passing (4xx, refused or broken connections, timeouts: tried again later).
 */
export class MailError extends Error {
  override name = 'MailError';
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly refused: string[] = [],
  ) {
    super(message);
  }
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<MailResult>;
  close(): void;
}

/** A name for a header: one line, no control or format characters, at most 100 characters. */
function headerName(name: string): string {
  return showBidiControls(name.replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ').trim()).slice(0, 100) || 'ferry';
}

/**
 * `"<name> via ferry" <address>` unless FERRY_MAIL_FROM names itself. An object, so nodemailer quotes
 * and encodes the name: nothing in it can end the header or add an address.
 */
function fromOf(mail: OutgoingMail): string | { name: string; address: string } {
  if (mail.from.includes('<')) return mail.from;
  return { name: `${headerName(mail.senderName)} via ferry`, address: mail.from };
}

/** The bare address of FERRY_MAIL_FROM, for the SMTP envelope. */
function envelopeFrom(from: string): string {
  return /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from;
}

export function subjectOf(mail: Pick<OutgoingMail, 'senderName' | 'fileName'>): string {
  return `${headerName(mail.senderName)} shared "${showBidiControls(mail.fileName)}" with you`;
}

function text(mail: OutgoingMail): string {
  const lines = [
    `A file was shared with you: ${showBidiControls(mail.fileName)} (${humanSize(mail.fileSize)}).`,
    '',
  ];
  if (mail.message) lines.push(mail.message, '');
  lines.push(`Download it here: ${mail.url}`);
  if (mail.hasPassword) lines.push('The link asks for a password; the sender will give it to you.');
  if (mail.expiresAt !== null) lines.push(`The link works until ${new Date(mail.expiresAt).toUTCString()}.`);
  return `${lines.join('\n')}\n`;
}

function html(mail: OutgoingMail): string {
  const message = mail.message ? `<p style="white-space: pre-wrap">${escapeHtml(mail.message)}</p>\n` : '';
  const password = mail.hasPassword
    ? '<p>The link asks for a password; the sender will give it to you.</p>\n'
    : '';
  const expiry =
    mail.expiresAt === null
      ? ''
      : `<p>The link works until ${escapeHtml(new Date(mail.expiresAt).toUTCString())}.</p>\n`;
  return `<!doctype html>
<html lang="en"><body>
<p>A file was shared with you: <strong>${escapeHtml(showBidiControls(mail.fileName))}</strong> (${escapeHtml(humanSize(mail.fileSize))}).</p>
${message}<p><a href="${escapeHtml(mail.url)}">Download ${escapeHtml(showBidiControls(mail.fileName))}</a></p>
${password}${expiry}</body></html>
`;
}

interface SmtpFailure {
  code?: string;
  responseCode?: number;
  response?: string;
  rejected?: string[];
  message?: string;
}

export function createMailer(url: Secret): Mailer {
  const transporter: Transporter = nodemailer.createTransport({
    url: url.reveal(),
    pool: true,
    maxConnections: 4,
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    async send(mail) {
      try {
        const info = await transporter.sendMail({
          messageId: mail.messageId,
          from: fromOf(mail),
          to: mail.to,
          cc: mail.cc,
          ...(mail.replyTo.length > 0 ? { replyTo: mail.replyTo } : {}),
          subject: subjectOf(mail),
          text: text(mail),
          html: html(mail),
          envelope: { from: envelopeFrom(mail.from), to: [...mail.to, ...mail.cc, ...mail.bcc] },
        });
        return {
          accepted: (info.accepted as unknown[]).map(String),
          refused: (info.rejected as unknown[]).map(String),
          response: String(info.response ?? ''),
        };
      } catch (err) {
        const failure = err as SmtpFailure;
        const code = failure.responseCode;
        // The server's words, never the URL (it may carry credentials): nodemailer's message is safe.
        const words = failure.response ?? failure.message ?? 'the mail could not be sent';
        throw new MailError(words, code !== undefined && code >= 500, failure.rejected ?? []);
      }
    },
    close() {
      transporter.close();
    },
  };
}
