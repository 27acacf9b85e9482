#!/usr/bin/env node
// Builds the web console (docs/console.md) into dist/ui/: ui/src bundled and minified by esbuild, the
// style sheet, and index.html naming both by their content hash (so they can be cached for good),
// each with a gzip copy the server sends to clients that accept it.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'dist', 'ui');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const bundle = await build({
  entryPoints: [join(root, 'ui', 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: join(root, 'ui', 'tsconfig.json'),
  write: false,
  legalComments: 'none',
});

const hashed = (name, ext, text) => {
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
  const file = `${name}-${hash}.${ext}`;
  writeFileSync(join(out, file), text);
  writeFileSync(join(out, `${file}.gz`), gzipSync(text, { level: 9 }));
  return file;
};

const script = hashed('app', 'js', bundle.outputFiles[0].contents);
const styles = hashed('styles', 'css', readFileSync(join(root, 'ui', 'styles.css')));
const html = readFileSync(join(root, 'ui', 'index.html'), 'utf8')
  .replace('{{script}}', script)
  .replace('{{styles}}', styles);
writeFileSync(join(out, 'index.html'), html);
writeFileSync(join(out, 'index.html.gz'), gzipSync(html, { level: 9 }));
console.log(`ui: dist/ui/${script} (${bundle.outputFiles[0].contents.length} bytes), ${styles}`);
