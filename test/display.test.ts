// src/display.ts: the one way ferry writes sizes and escapes HTML for people (CLI, console, share pages,
// mails), and bidi controls shown rather than obeyed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml, humanSize, showBidiControls, withoutBidiControls } from '../src/display.js';

test('sizes: whole bytes under 1 KiB, one decimal under 10 of a unit, none from 10 on', () => {
  assert.equal(humanSize(0), '0 B');
  assert.equal(humanSize(1023), '1023 B');
  assert.equal(humanSize(1024), '1.0 KiB');
  assert.equal(humanSize(1536), '1.5 KiB');
  assert.equal(humanSize(18_022), '18 KiB');
  assert.equal(humanSize(10 * 1024 * 1024), '10 MiB');
  assert.equal(humanSize(5 * 1024 ** 4), '5.0 TiB');
  assert.equal(humanSize(3 * 1024 ** 6), '3072 PiB', 'the largest unit keeps counting');
});

test('HTML text: the five characters that can end a text or an attribute are escaped, nothing else', () => {
  assert.equal(
    escapeHtml(`<a href="x" title='y'>&</a>`),
    '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
  );
  assert.equal(escapeHtml('report 2026 – é.pdf'), 'report 2026 – é.pdf');
});

test('bidi controls are shown as code points for reading and dropped for saving', () => {
  assert.equal(showBidiControls('report\u202Etxt.exe'), 'report<U+202E>txt.exe');
  assert.equal(withoutBidiControls('report\u202Etxt.exe'), 'reporttxt.exe');
});
