// src/display.ts: the one way ferry writes sizes and escapes HTML for people (CLI, console, share pages,
// mails), bidi controls shown rather than obeyed, and the columns a text takes on a terminal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  clipToWidth,
  displayWidth,
  escapeHtml,
  humanSize,
  padToWidth,
  showBidiControls,
  withoutBidiControls,
} from '../src/display.js';

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

test('display width: two columns for a CJK character, a fullwidth form or an emoji (however many code points), none for a combining mark', () => {
  assert.equal(displayWidth('report.txt'), 10);
  assert.equal(displayWidth('日本語の図面.txt'), 16);
  assert.equal(displayWidth('한국어'), 6);
  assert.equal(displayWidth('ＡＢ'), 4, 'fullwidth Latin');
  assert.equal(displayWidth('📁 photos'), 9);
  assert.equal(displayWidth('👨‍👩‍👧'), 2, 'a family joined by ZWJ is one picture');
  assert.equal(displayWidth('🇯🇵'), 2, 'a flag is two regional indicators, one picture');
  assert.equal(displayWidth('❤️'), 2, 'a text symbol asked to show as an emoji (VS16)');
  assert.equal(displayWidth('❤'), 1, 'the same symbol as text');
  assert.equal(displayWidth('cafe\u0301'), 4, 'e and its combining accent are one column');
  assert.equal(displayWidth('é'), 1);
});

test('padding and clipping count columns, not characters', () => {
  assert.equal(padToWidth('日本', 6), '日本  ');
  assert.equal(padToWidth('日本', 6, true), '  日本');
  assert.equal(padToWidth('toolong', 3), 'toolong', 'never cut by padding');
  assert.equal(clipToWidth('日本語の図面', 7), '日本語…', 'three wide characters and the mark: 7 columns');
  assert.equal(clipToWidth('short', 7), 'short');
});
