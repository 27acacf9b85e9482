// The HTML pages of share links: a password form, a landing page with a download button, and the
// pages that say why a link serves nothing. Plain HTML that works without JavaScript (there is none),
// styled by one stylesheet (share.css) so that the Content-Security-Policy allows no inline code.
// Every value is escaped, and the file name's bidi controls are shown as <U+XXXX> (src/display.ts).
import { escapeHtml, humanSize, showBidiControls } from '../../display.js';

export interface FileFacts {
  name: string;
  size: number;
  /** Epoch ms, or null for a link that does not expire. */
  expiresAt: number | null;
}

function layout(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">${head}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/s/share.css">
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

function facts(file: FileFacts): string {
  const expiry =
    file.expiresAt === null
      ? '<dd>never</dd>'
      : `<dd><time datetime="${new Date(file.expiresAt).toISOString()}">${escapeHtml(new Date(file.expiresAt).toUTCString())}</time></dd>`;
  return `<dl>
<dt>File</dt><dd class="name">${escapeHtml(showBidiControls(file.name))}</dd>
<dt>Size</dt><dd>${escapeHtml(humanSize(file.size))}</dd>
<dt>Link expires</dt>${expiry}
</dl>`;
}

/** The password form; `error` after a refused password. */
export function passwordPage(file: FileFacts, action: string, error?: string): string {
  const alert = error ? `<p class="error" role="alert" id="password-error">${escapeHtml(error)}</p>\n` : '';
  return layout(
    `${showBidiControls(file.name)}: password required`,
    `<h1>A file was shared with you</h1>
${facts(file)}
<form method="post" action="${escapeHtml(action)}">
${alert}<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus${error ? ' aria-invalid="true" aria-describedby="password-error"' : ''}>
<button type="submit">Download</button>
</form>`,
  );
}

/**
 * What a browser shows once the right password was given: the download starts from a GET that the
 * grant cookie lets through (a refresh, which needs no script), and this page replaces the form, so a
 * wrong guess made before leaves no "not right" message on screen.
 */
export function startingPage(file: FileFacts, action: string): string {
  return layout(
    `${showBidiControls(file.name)}: download starting`,
    `<h1>Your download is starting</h1>
${facts(file)}
<p role="status">If it does not start, <a href="${escapeHtml(action)}" download>download ${escapeHtml(showBidiControls(file.name))}</a>.</p>`,
    `\n<meta http-equiv="refresh" content="0; url=${escapeHtml(action)}">`,
  );
}

/** The landing page of a link with a download limit: downloading is a deliberate POST. */
export function landingPage(file: FileFacts, action: string, remaining: number): string {
  return layout(
    showBidiControls(file.name),
    `<h1>A file was shared with you</h1>
${facts(file)}
<p>This link can be used ${remaining === 1 ? 'once more' : `${remaining} more times`}.</p>
<form method="post" action="${escapeHtml(action)}">
<button type="submit">Download</button>
</form>`,
  );
}

/** Why there is nothing to download: unknown, revoked, expired, used up, or a source out of reach. */
export function messagePage(title: string, text: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>`);
}

export const SHARE_CSS = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0; background: Canvas; color: CanvasText; }
main { max-width: 32rem; margin: 4rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
label { display: block; font-weight: 600; margin-top: 1rem; }
input { font: inherit; padding: 0.5rem; width: 100%; box-sizing: border-box; border: 1px solid GrayText; border-radius: 4px; }
button { font: inherit; margin-top: 1rem; padding: 0.5rem 1.25rem; border: 0; border-radius: 4px; background: #1a56b8; color: #fff; cursor: pointer; }
button:focus-visible, input:focus-visible { outline: 3px solid #f0a000; outline-offset: 2px; }
.error { color: #b00020; font-weight: 600; }
@media (prefers-color-scheme: dark) { .error { color: #ff8a80; } button { background: #4d8ef0; color: #000; } }
@media (prefers-reduced-motion: reduce) { * { transition: none !important; animation: none !important; } }
`;
