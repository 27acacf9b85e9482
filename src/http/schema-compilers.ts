// The functions Fastify compiles from the routes' schemas (ajv validators for requests,
// fast-json-stringify serializers for answers), kept for the life of the process by what the schema says.
// Fastify compiles every route's schemas each time an app is built, and that is most of the cost of
// building one (about 0.4 s of CPU); a process that builds the app more than once (the tests build one
// per case) compiles each distinct schema once. These are Fastify's own compilers
// (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler) with Fastify's options: only the reuse
// is ours. The key is the schema's JSON, as both compilers read nothing else of it, under the key of the
// shared schemas and options the compiler was made with.
import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';
import { type SerializerFactory, SerializerSelector } from '@fastify/fast-json-stringify-compiler';

// What both compilers are at run time: made per set of shared schemas and options, then called once per
// route part with {schema, method, url, httpPart | httpStatus}. (Their published types describe other uses,
// hence the casts at the end.)
type Select = (externalSchemas: unknown, options: unknown) => (route: { schema: unknown }) => unknown;

function reusing(select: Select): Select {
  const byCompiler = new Map<string, Map<string, unknown>>();
  return (externalSchemas, options) => {
    const compilerKey = JSON.stringify([externalSchemas ?? {}, options ?? {}]);
    let known = byCompiler.get(compilerKey);
    if (!known) {
      known = new Map();
      byCompiler.set(compilerKey, known);
    }
    const compiled = known;
    const compile = select(externalSchemas, options);
    return (route) => {
      const key = JSON.stringify(route.schema);
      let fn = compiled.get(key);
      if (fn === undefined) {
        fn = compile(route);
        compiled.set(key, fn);
      }
      return fn;
    };
  };
}

export const schemaCompilers = {
  buildValidator: reusing(AjvCompiler() as unknown as Select) as unknown as ValidatorFactory,
  buildSerializer: reusing(SerializerSelector() as unknown as Select) as unknown as SerializerFactory,
};
