// The layering of src/ (README, "Layout"), checked by test/layering.test.ts and, by hand,
//   npx depcruise src ui/src --config .dependency-cruiser.mjs
// Each folder imports only from its own layer and the ones below it, top to bottom:
//   entry     the programs and their wiring: cli.ts, server.ts, background.ts, bootstrap.ts, services.ts, cli/
//   http      the HTTP API and pages
//   features  domain/ (what the API does) and engine/ (the transfer engine)
//   lifecycle lifecycle/ (every state of the work both features write, and every move between them:
//             transfers, jobs and their objects, plans, sends, webhooks, location health;
//             docs/engine.md, "The pieces")
//   parts     api/ (the wire shapes: TypeBox schemas, the views built from rows, webhook events),
//             durable/ (the JSON kept in the database's columns: one checked codec per column), queue/ (what every durable queue shares, the webhook outbox), objects/, mail/, crypto/,
//             config.ts, metrics.ts
//   storage   stores/, net/, db/, providers.ts (the provider list, read from the stores' declarations)
//   kernel    errors, log, secrets, display, the data dir, states, clock, ids, util/
// And no file imports itself through others (a circle, type-only imports included): a circle leaves
// no order in which to read, load or change its files one at a time.
// The console (ui/src) shares one module with the server, src/display.ts, and takes the wire shapes'
// types from src/api/ (type-only: the bundle holds no TypeBox). The console and the CLI call the API
// through its route map, src/api/routes.ts, and take the API's types from there alone.
const ENTRY = '^src/(cli[.]ts|server[.]ts|background[.]ts|bootstrap[.]ts|services[.]ts|cli/)';
const HTTP = '^src/http/';
const FEATURES = '^src/(domain|engine)/';
const LIFECYCLE = '^src/lifecycle/';
const PARTS = '^src/(api|durable|queue|objects|mail|crypto)/|^src/(config|metrics)[.]ts$';
const STORAGE = '^src/(stores|net|db)/|^src/providers[.]ts$';
const KERNEL = '^src/(errors|log|secret|display|data-dir|heap|states|clock|ids)[.]ts$|^src/util/';

const above = (...layers) => ({ path: layers.join('|') });

export default {
  forbidden: [
    {
      name: 'kernel-imports-kernel',
      comment: 'The kernel is imported by everything and imports nothing of src/ but itself.',
      severity: 'error',
      from: { path: KERNEL },
      to: { path: '^src/', pathNot: KERNEL },
    },
    {
      name: 'storage-below-parts',
      comment: 'stores/, net/ and db/ know nothing of the layers above them.',
      severity: 'error',
      from: { path: STORAGE },
      to: above(ENTRY, HTTP, FEATURES, LIFECYCLE, PARTS),
    },
    {
      name: 'parts-below-features',
      comment:
        'api/, durable/, queue/, objects/, mail/, crypto/ and the settings know nothing of the lifecycles, the features or the routes.',
      severity: 'error',
      from: { path: PARTS },
      to: above(ENTRY, HTTP, FEATURES, LIFECYCLE),
    },
    {
      name: 'lifecycle-below-features',
      comment:
        'lifecycle/ is where domain/ and engine/ both write the state of the work: it calls neither of them.',
      severity: 'error',
      from: { path: LIFECYCLE },
      to: above(ENTRY, HTTP, FEATURES),
    },
    {
      name: 'features-below-http',
      comment: 'domain/ and engine/ are called by the API and the workers, and call neither.',
      severity: 'error',
      from: { path: FEATURES },
      to: above(ENTRY, HTTP),
    },
    {
      name: 'engine-below-domain',
      comment: 'The engine runs what domain/ accepted; it does not call back into domain/.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/domain/' },
    },
    {
      name: 'no-circle',
      comment:
        'No two files import each other, directly or through others, types included: what both need goes in a file of its own that neither imports back.',
      severity: 'error',
      from: { path: '^(src|ui/src)/' },
      to: { circular: true },
    },
    {
      name: 'http-below-entry',
      comment: "The API is wired by the entry points; it may name the wiring's type, never call it.",
      severity: 'error',
      from: { path: HTTP },
      to: { path: ENTRY, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'console-shares-display-only',
      comment:
        'The console is bundled for the browser: of the server it takes src/display.ts and src/states.ts (the states and which of them are finished: plain values, no imports) alone.',
      severity: 'error',
      from: { path: '^ui/src/' },
      to: { path: '^src/', pathNot: '^src/(display|states)[.]ts$|^src/api/' },
    },
    {
      name: 'console-types-only-from-api',
      comment:
        "The console names the API's wire shapes (src/api/) but bundles none of their TypeBox; src/api/scopes.ts is plain values with no imports, shared with the CLI, and src/api/routes.ts types and one function with none.",
      severity: 'error',
      from: { path: '^ui/src/' },
      to: {
        path: '^src/api/',
        pathNot: '^src/api/(scopes|routes)\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'clients-through-the-route-map',
      comment:
        "The console and the CLI call the API through its route map and take its types from there (src/api/routes.ts), so that no client declares or picks a shape of its own; src/api/scopes.ts's values besides.",
      severity: 'error',
      from: { path: '^(ui/src|src/cli)/' },
      to: { path: '^src/api/', pathNot: '^src/api/(scopes|routes)\\.ts$' },
    },
    {
      name: 'route-map-types-only',
      comment:
        'The route map is loaded by the console and the CLI: it names the schemas as types only, so it loads no TypeBox and nothing of the server.',
      severity: 'error',
      from: { path: '^src/api/routes\\.ts$' },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'sdks-on-first-use',
      comment:
        "The bucket stores' SDKs are loaded when a store first needs one (src/stores/shared/sdk.ts), not when ferry starts: elsewhere they are named as types only.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/stores/shared/sdk[.]ts$|^src/stores/gcs/auth[.]ts$' },
      to: {
        path: '(^|/)(@aws-sdk/client-s3|@azure/storage-blob|@google-cloud/storage|google-auth-library)(/|$)',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'gcs-auth-on-first-use',
      comment:
        "src/stores/gcs/auth.ts extends google-auth-library's client: it is imported only when a gcs store builds its client.",
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/stores/gcs/auth[.]ts$', dependencyTypesNot: ['type-only', 'dynamic-import'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
