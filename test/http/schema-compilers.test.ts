// Each distinct schema compiled once per process, when a request first needs it
// (src/http/schema-compilers.ts): an app built after another gets the functions the first one made, two
// schemas that say different things never share one, and nothing is compiled before its first call
// but by compilePending, which test/http/route-schemas.test.ts runs over the real app.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { compilePending, schemaCompilers } from '../../src/http/schema-compilers.js';

const options = { customOptions: { coerceTypes: false, removeAdditional: false } };
// Built anew each time, as a route module builds its schemas when the app registers it.
const nameOf = (max: number) => ({
  type: 'object',
  properties: { name: { type: 'string', maxLength: max } },
  required: ['name'],
});

// What Fastify does when an app is built: one compiler per app, then one call per route part.
function compiled(kind: 'buildValidator' | 'buildSerializer', schema: object): unknown {
  const build = schemaCompilers[kind] as unknown as (
    externals: object,
    options: object,
  ) => (route: object) => unknown;
  const part = kind === 'buildValidator' ? { httpPart: 'body' } : { httpStatus: '200' };
  return build({}, kind === 'buildValidator' ? options : {})({ schema, method: 'POST', url: '/x', ...part });
}

test('an equal schema in a later app gets the function compiled for the first', () => {
  for (const kind of ['buildValidator', 'buildSerializer'] as const) {
    const first = compiled(kind, nameOf(3));
    assert.equal(typeof first, 'function');
    assert.equal(compiled(kind, nameOf(3)), first, `${kind}: compiled again`);
    assert.notEqual(compiled(kind, nameOf(4)), first, `${kind}: a different schema shared a function`);
  }
});

test('apps built one after another validate and answer by their own schemas', async () => {
  const appWith = async (max: number) => {
    const app = Fastify({ schemaController: { compilersFactory: schemaCompilers }, ajv: options });
    const answer = { type: 'object', properties: { name: { type: 'string' } } };
    app.post('/x', { schema: { body: nameOf(max), response: { 200: answer } } }, async (request) => ({
      ...(request.body as object),
      extra: 'not in the answer schema',
    }));
    await app.ready();
    return app;
  };
  const apps = [await appWith(3), await appWith(3), await appWith(5)];
  try {
    const post = (i: number, name: string) =>
      apps[i]?.inject({ method: 'POST', url: '/x', payload: { name } }) ?? assert.fail();
    for (const i of [0, 1]) {
      const ok = await post(i, 'abc');
      assert.equal(ok.statusCode, 200);
      assert.deepEqual(ok.json(), { name: 'abc' }, 'the answer is serialized by its schema');
      assert.equal((await post(i, 'abcd')).statusCode, 400);
    }
    assert.equal((await post(2, 'abcd')).statusCode, 200, 'maxLength 5 is a schema of its own');
    assert.equal((await post(2, 'abcdef')).statusCode, 400);
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
});

test('a function is compiled at its first call, not when Fastify asks for it', () => {
  // A reference to nothing: ajv refuses it, fast-json-stringify too, but only when they compile.
  const broken = () => ({ type: 'object', properties: { a: { $ref: '#/definitions/nowhere' } } });
  for (const kind of ['buildValidator', 'buildSerializer'] as const) {
    const fn = compiled(kind, broken()) as (value: unknown) => unknown;
    assert.equal(typeof fn, 'function', `${kind}: handed out without compiling`);
    assert.throws(() => fn({ a: 1 }), `${kind}: the first call compiles`);
  }
  const pendingOne = compiled('buildValidator', { ...broken(), title: 'pending' });
  assert.equal(typeof pendingOne, 'function');
  assert.throws(() => compilePending(), 'compilePending compiles what was handed out');
});

test('a validator reports its errors and coerces as the compiled one does', () => {
  const validate = compiled('buildValidator', nameOf(2)) as ((value: unknown) => boolean) & {
    errors?: unknown[];
    schemaEnv?: unknown;
  };
  assert.ok(validate.schemaEnv, 'Fastify passes the parent only to a function with schemaEnv');
  assert.equal(validate({ name: 'ab' }), true);
  assert.equal(validate.errors, null);
  assert.equal(validate({ name: 'abc' }), false);
  assert.match(JSON.stringify(validate.errors), /maxLength/);
});
