// Checks on everything a request carries, whatever its route's schema says (docs/api.md, "Input"): no
// string may hold a lone surrogate (half of a UTF-16 pair: it has no UTF-8 form, so neither database
// can store it as sent and no provider can take it as a name), and no body may nest deeper than
// BODY_MAX_DEPTH levels. Both are checked in one walk without recursion, before the schema is, so
// nothing later (validation, serialization, a domain check) meets a body it could overflow on.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { invalid } from '../errors.js';

declare global {
  interface String {
    /** ES2024; Node 20 has it, the ES2023 lib this project compiles against does not. */
    isWellFormed(): boolean;
  }
}

/** No request of ferry's API nests deeper than a few levels; location metadata is held to 32. */
export const BODY_MAX_DEPTH = 64;

interface Frame {
  value: unknown;
  key: string;
  depth: number;
  parent: Frame | undefined;
}

function where(frame: Frame): string {
  const keys: string[] = [];
  for (let f: Frame | undefined = frame; f !== undefined; f = f.parent) keys.push(f.key);
  return keys.reverse().join('.');
}

/** The first problem in `value`, named by where it is (`body.from.0`), or undefined. */
export function inputProblem(value: unknown, root: string): string | undefined {
  const stack: Frame[] = [{ value, key: root, depth: 0, parent: undefined }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const node = frame.value;
    if (typeof node === 'string') {
      if (!node.isWellFormed()) return `${where(frame)} holds a lone surrogate (not valid Unicode)`;
      continue;
    }
    if (node === null || typeof node !== 'object' || Buffer.isBuffer(node)) continue;
    const depth = frame.depth + 1;
    if (depth > BODY_MAX_DEPTH) return `${root} must be nested at most ${BODY_MAX_DEPTH} levels deep`;
    for (const [key, child] of Object.entries(node)) {
      if (!key.isWellFormed())
        return `${where(frame)} has a field name with a lone surrogate (not valid Unicode)`;
      if (child !== null && (typeof child === 'object' || typeof child === 'string')) {
        stack.push({ value: child, key, depth, parent: frame });
      }
    }
  }
  return undefined;
}

/** A preValidation hook: 400 naming the field. */
export function checkInput(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const problem =
    inputProblem(request.params, 'params') ??
    inputProblem(request.query, 'querystring') ??
    inputProblem(request.body, 'body');
  done(problem === undefined ? undefined : invalid(problem));
}
