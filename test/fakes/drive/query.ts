// A small parser and evaluator for the Drive v3 search language (the `q` parameter of files.list),
// enough for what stores send: `'<id>' in parents`, `name = '<name>'`, `mimeType = '…'`,
// `trashed = false`, joined with and / or / not and parentheses.
// Reference: https://developers.google.com/drive/api/guides/search-files and
// https://developers.google.com/drive/api/guides/ref-search-terms — string values are in single
// quotes; a quote inside is written \' and a backslash \\.

export interface QueryFile {
  name: string;
  mimeType: string;
  parents: string[];
  trashed: boolean;
}

type Token =
  | { kind: 'string'; value: string }
  | { kind: 'word'; value: string }
  | { kind: 'op'; value: string }
  | { kind: 'paren'; value: '(' | ')' };

type Node =
  | { kind: 'and' | 'or'; left: Node; right: Node }
  | { kind: 'not'; operand: Node }
  | { kind: 'inParents'; id: string }
  | { kind: 'compare'; field: 'name' | 'mimeType'; op: '=' | '!=' | 'contains'; value: string }
  | { kind: 'trashed'; op: '=' | '!='; value: boolean };

export class QueryError extends Error {}

function tokenize(q: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i] as string;
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
    } else if (c === "'") {
      let value = '';
      i++;
      for (;;) {
        if (i >= q.length) throw new QueryError('unterminated string');
        const d = q[i] as string;
        if (d === '\\') {
          const next = q[i + 1];
          if (next === undefined) throw new QueryError('dangling escape');
          value += next;
          i += 2;
        } else if (d === "'") {
          i++;
          break;
        } else {
          value += d;
          i++;
        }
      }
      tokens.push({ kind: 'string', value });
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: 'paren', value: c });
      i++;
    } else if (c === '!' && q[i + 1] === '=') {
      tokens.push({ kind: 'op', value: '!=' });
      i += 2;
    } else if (c === '=') {
      tokens.push({ kind: 'op', value: '=' });
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      let word = '';
      while (i < q.length && /[A-Za-z0-9_]/.test(q[i] as string)) word += q[i++];
      tokens.push({ kind: 'word', value: word });
    } else {
      throw new QueryError(`unexpected character ${JSON.stringify(c)}`);
    }
  }
  return tokens;
}

class Parser {
  #pos = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.#or();
    if (this.#pos !== this.tokens.length) throw new QueryError('unexpected trailing input');
    return node;
  }

  #peekWord(word: string): boolean {
    const t = this.tokens[this.#pos];
    return t?.kind === 'word' && t.value.toLowerCase() === word;
  }

  #next(): Token {
    const t = this.tokens[this.#pos++];
    if (!t) throw new QueryError('unexpected end of query');
    return t;
  }

  #or(): Node {
    let left = this.#and();
    while (this.#peekWord('or')) {
      this.#pos++;
      left = { kind: 'or', left, right: this.#and() };
    }
    return left;
  }

  #and(): Node {
    let left = this.#unary();
    while (this.#peekWord('and')) {
      this.#pos++;
      left = { kind: 'and', left, right: this.#unary() };
    }
    return left;
  }

  #unary(): Node {
    if (this.#peekWord('not')) {
      this.#pos++;
      return { kind: 'not', operand: this.#unary() };
    }
    const t = this.#next();
    if (t.kind === 'paren' && t.value === '(') {
      const inner = this.#or();
      const close = this.#next();
      if (close.kind !== 'paren' || close.value !== ')') throw new QueryError('expected )');
      return inner;
    }
    if (t.kind === 'string') {
      const op = this.#next();
      const field = this.#next();
      if (op.kind !== 'word' || op.value !== 'in' || field.kind !== 'word' || field.value !== 'parents') {
        throw new QueryError('only "<id> in parents" is supported');
      }
      return { kind: 'inParents', id: t.value };
    }
    if (t.kind === 'word') {
      const op = this.#next();
      const opValue =
        op.kind === 'op' || (op.kind === 'word' && op.value === 'contains') ? op.value : undefined;
      if (opValue === undefined) throw new QueryError(`expected an operator after ${t.value}`);
      const value = this.#next();
      if (t.value === 'name' || t.value === 'mimeType') {
        if (value.kind !== 'string') throw new QueryError(`${t.value} takes a quoted string`);
        if (opValue !== '=' && opValue !== '!=' && opValue !== 'contains')
          throw new QueryError('bad operator');
        return { kind: 'compare', field: t.value, op: opValue, value: value.value };
      }
      if (t.value === 'trashed') {
        if (value.kind !== 'word' || (value.value !== 'true' && value.value !== 'false')) {
          throw new QueryError('trashed takes true or false');
        }
        if (opValue !== '=' && opValue !== '!=') throw new QueryError('bad operator');
        return { kind: 'trashed', op: opValue, value: value.value === 'true' };
      }
      throw new QueryError(`unsupported field ${t.value}`);
    }
    throw new QueryError('unexpected token');
  }
}

export type Predicate = (file: QueryFile) => boolean;

function evaluate(node: Node, file: QueryFile, resolveId: (id: string) => string): boolean {
  switch (node.kind) {
    case 'and':
      return evaluate(node.left, file, resolveId) && evaluate(node.right, file, resolveId);
    case 'or':
      return evaluate(node.left, file, resolveId) || evaluate(node.right, file, resolveId);
    case 'not':
      return !evaluate(node.operand, file, resolveId);
    case 'inParents':
      return file.parents.includes(resolveId(node.id));
    case 'trashed':
      return node.op === '=' ? file.trashed === node.value : file.trashed !== node.value;
    case 'compare': {
      const actual = file[node.field];
      if (node.op === 'contains') return actual.includes(node.value);
      return node.op === '=' ? actual === node.value : actual !== node.value;
    }
  }
}

/** Parses q; `resolveId` maps the 'root' alias to the root folder's id. Throws QueryError. */
export function compileQuery(q: string, resolveId: (id: string) => string): Predicate {
  const ast = new Parser(tokenize(q)).parse();
  return (file) => evaluate(ast, file, resolveId);
}
