// Partial responses: the `fields` parameter of Google APIs, e.g. "nextPageToken,files(id,name)" or
// "files/id" or "*". The real API returns only the fields asked for, so a store that forgets to ask
// for md5Checksum or size sees them missing here too.
// Reference: https://developers.google.com/drive/api/guides/fields-parameter

type Selection = Map<string, Selection | true>;

export class FieldsError extends Error {}

function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (depth < 0) throw new FieldsError('unbalanced parentheses');
    if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  if (depth !== 0) throw new FieldsError('unbalanced parentheses');
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function merge(into: Selection, name: string, sub: Selection | true): undefined {
  const existing = into.get(name);
  if (existing === true || sub === true || existing === undefined) {
    into.set(name, existing === undefined ? sub : true);
    return;
  }
  for (const [k, v] of sub) merge(existing, k, v);
}

export function parseFields(text: string): Selection {
  const selection: Selection = new Map();
  for (const part of splitTop(text)) {
    const open = part.indexOf('(');
    if (open >= 0) {
      if (!part.endsWith(')')) throw new FieldsError(`bad field selector ${part}`);
      const head = part.slice(0, open).trim();
      const inner = parseFields(part.slice(open + 1, -1));
      addPath(selection, head, inner);
    } else {
      addPath(selection, part, true);
    }
  }
  return selection;
}

function addPath(selection: Selection, path: string, leaf: Selection | true): undefined {
  const names = path.split('/');
  let node: Selection | true = leaf;
  for (let i = names.length - 1; i > 0; i--) node = new Map([[names[i] as string, node]]);
  merge(selection, names[0] as string, node);
}

/** Applies a selection to a JSON value (arrays are filtered element by element). */
export function applyFields(value: unknown, selection: Selection | true): unknown {
  if (selection === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => applyFields(v, selection));
  if (selection.has('*')) return value;
  const out: Record<string, unknown> = {};
  for (const [name, sub] of selection) {
    const v = (value as Record<string, unknown>)[name];
    if (v !== undefined) out[name] = applyFields(v, sub);
  }
  return out;
}
