// Two libraries as one file each, for dist/ (scripts/build.mjs) and the test runner's tree
// (scripts/test-tree.mjs); docs/testing.md, "How a file runs".
//
// typebox and kysely ship as ES modules of many small files: importing the server loads about 950 of
// their files (typebox 684, kysely 264) of its ~1,350 modules, and Node 20 spends most of a process's
// start on finding, opening and linking modules, not on running them. Loaded as one bundled file each,
// they cost about a quarter of the CPU (typebox with typebox/compile 0.6 s → 0.15 s, kysely 0.35 s →
// 0.14 s, measured alone). Every test file and every `ferry` process (serve, migrate, the CLI's
// `keys create --workspace`) imports both, and a CI run starts about 500 of them.
//
// The bundle is built with code splitting, so typebox and typebox/compile share one copy of typebox's
// modules (its format registry and type guards are module state: two copies would not see each other).
// Each compiled file imports the bundle by a relative path instead of the package name; nothing else
// about a compiled file changes. The packages stay ordinary dependencies: the type-checker, the linter
// and the editor read them from node_modules as before.
import { dirname, join, relative } from 'node:path';

/** The specifiers bundled, and the file (without .js) each becomes in the vendor folder. */
export const VENDORED = {
  typebox: 'typebox',
  'typebox/compile': 'typebox-compile',
  kysely: 'kysely',
};

/** Bundles VENDORED into `dir` (created), with the chunks they share. */
export async function buildVendor(esbuild, root, dir) {
  await esbuild({
    absWorkingDir: root,
    entryPoints: Object.entries(VENDORED).map(([specifier, out]) => ({ in: specifier, out })),
    outdir: dir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunk-[hash]',
    legalComments: 'linked',
    logLevel: 'error',
  });
}

/**
 * An esbuild plugin for a build of one output file per source file (bundle: true, so that imports are
 * resolved, but every import left external): a VENDORED specifier becomes the relative path from the
 * output file to its bundle in `vendorDir`; every other import stays as it is written.
 */
export function vendorPlugin({ outbase, outdir, vendorDir }) {
  return {
    name: 'ferry-vendor',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const out = VENDORED[args.path];
        if (out === undefined) return { path: args.path, external: true };
        const from = dirname(join(outdir, relative(outbase, args.importer)));
        let path = relative(from, join(vendorDir, `${out}.js`));
        if (!path.startsWith('.')) path = `./${path}`;
        return { path, external: true };
      });
    },
  };
}
