// The functions Fastify compiles from the routes' schemas (ajv validators for requests,
// fast-json-stringify serializers for answers): each compiled when a request first needs it, and kept for
// the life of the process by what the schema says.
// Fastify asks for every route's functions each time an app is built. Compiling them all then was most
// of the cost of starting a server (about 0.5 s of CPU on an idle machine, over 1 s under load, in every
// `ferry serve` and every test process that builds an app), though a process uses few of its 58 routes'
// functions before it ends, and many processes (a test's servers, a CLI's `keys create`) use none. So
// each function given to Fastify compiles on its first call; a process that builds the app more than
// once (the tests build one per case) compiles each distinct schema once. A schema that cannot compile
// fails its first request with a 500 rather than the start: test/http/schema-compilers.test.ts compiles
// every route of the real app (compilePending) so that such a schema fails a test instead.
// These are Fastify's own compilers (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler) with
// Fastify's options: only the reuse and the wait are ours. The key is the schema's JSON, as both
// compilers read nothing else of it, under the key of the shared schemas and options the compiler was
// made with.
import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';
import { type SerializerFactory, SerializerSelector } from '@fastify/fast-json-stringify-compiler';

// What both compilers are at run time: made per set of shared schemas and options, then called once per
// route part with {schema, method, url, httpPart | httpStatus}. (Their published types describe other uses,
// hence the casts at the end.)
type Compiled = ((...args: unknown[]) => unknown) & { errors?: unknown };
type Select = (externalSchemas: unknown, options: unknown) => (route: { schema: unknown }) => Compiled;

/** The functions handed out and not compiled yet, for compilePending. */
const pending = new Set<() => Compiled>();
let compiledSoFar = 0;

/** How many functions this process has compiled (for the tests). */
export function compiledCount(): number {
  return compiledSoFar;
}

/**
 * A function that compiles `compile()` on its first call and then is it. A validator also carries
 * what Fastify reads of an ajv validator: `schemaEnv` (so that Fastify passes the parent, which lets
 * ajv coerce a root value) and, after each call, `errors`.
 */
function onFirstCall(compile: () => Compiled, validator: boolean): Compiled {
  let real: Compiled | undefined;
  const get = (): Compiled => {
    if (real === undefined) {
      real = compile();
      compiledSoFar += 1;
      pending.delete(get);
    }
    return real;
  };
  pending.add(get);
  const call: Compiled = validator
    ? (...args: unknown[]) => {
        const fn = get();
        const result = fn(...args);
        call.errors = fn.errors;
        return result;
      }
    : (...args: unknown[]) => get()(...args);
  if (validator) Object.assign(call, { schemaEnv: true });
  return call;
}

function reusing(select: Select, validator: boolean): Select {
  const byCompiler = new Map<string, Map<string, Compiled>>();
  return (externalSchemas, options) => {
    const compilerKey = JSON.stringify([externalSchemas ?? {}, options ?? {}]);
    let known = byCompiler.get(compilerKey);
    if (!known) {
      known = new Map();
      byCompiler.set(compilerKey, known);
    }
    const compiled = known;
    let compiler: ReturnType<Select> | undefined;
    return (route) => {
      const key = JSON.stringify(route.schema);
      let fn = compiled.get(key);
      if (fn === undefined) {
        fn = onFirstCall(() => {
          compiler ??= select(externalSchemas, options);
          return compiler(route);
        }, validator);
        compiled.set(key, fn);
      }
      return fn;
    };
  };
}

/** Compiles every function handed out and not compiled yet (a schema that cannot compile throws here). */
export function compilePending(): number {
  const all = [...pending];
  for (const get of all) get();
  return all.length;
}

export const schemaCompilers = {
  buildValidator: reusing(AjvCompiler() as unknown as Select, true) as unknown as ValidatorFactory,
  buildSerializer: reusing(SerializerSelector() as unknown as Select, false) as unknown as SerializerFactory,
};
