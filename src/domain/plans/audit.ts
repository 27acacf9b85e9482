// What the audit log says of a plan (docs/api.md, "Audit log"): its dry run is recorded as
// `plan.create`, and its run as the action it performs (copy, sync, move, remove), each naming what it
// acts on. A plan expires and is pruned, so the record must answer "who removed this file" alone: a
// remove or move plan of a few objects names each, a larger one the paths it was given and how many
// objects they held; every record counts the plan's entries by action and names the plan.
import { planEntryWork } from '../../durable/work.js';
import type { PlanRequest } from '../../lifecycle/plans.js';
import * as plans from '../../lifecycle/plans.js';
import type { ObjectRef } from '../../lifecycle/specs.js';
import type { Queryable } from '../../queue/moves.js';

/** A remove or move plan of at most this many objects is recorded with the name of each. */
export const AUDIT_NAMES_MAX = 10;
/** The most characters of names one record lists; the rest are counted ("and 3 more"). */
export const AUDIT_NAMES_CHARS = 2048;

/** The order the counts are written in; an action not here comes after, as the plan has it. */
const ORDER = ['copy', 'move', 'remove', 'delete', 'skip'];

export interface PlanFacts {
  id: string;
  request: PlanRequest;
  /** The plan's entries by action (src/domain/plans/plans.ts, write). */
  counts: Record<string, number>;
  total: number;
}

/**
 * The target of a plan's records: what it acts on, its counts and its id, as
 * `<what> (<n> <action>, …; plan <id>)`; `label` names a location by its id.
 */
export async function planTarget(
  q: Queryable,
  plan: PlanFacts,
  label: (locationId: string) => Promise<string>,
): Promise<string> {
  const at = async (ref: ObjectRef) => `${await label(ref.location_id)}/${ref.path}`;
  const { request } = plan;
  let what: string;
  if (request.kind === 'copy' || request.kind === 'sync') {
    what = `${await at(request.source)} → ${await at(request.destination)}`;
  } else {
    const spec = request.spec;
    const given = spec.kind === 'move' ? spec.sources : spec.kind === 'remove' ? spec.paths : [];
    const names = plan.total <= AUDIT_NAMES_MAX ? await objectNames(q, plan.id, at) : undefined;
    const sources = listed(names ?? (await Promise.all(given.map(at))));
    what = spec.kind === 'move' ? `${sources} → ${await at(spec.destination)}` : sources;
  }
  return `${what} (${countsText(plan.counts, plan.total)}; plan ${plan.id})`;
}

/** The objects a remove or move plan acts on, as `<label>/<path>`, in the plan's order. */
async function objectNames(
  q: Queryable,
  planId: string,
  at: (ref: ObjectRef) => Promise<string>,
): Promise<string[] | undefined> {
  const entries = await plans.entries(q, planId, -1, AUDIT_NAMES_MAX);
  const names: string[] = [];
  for (const entry of entries) {
    const work =
      entry.work === undefined ? undefined : planEntryWork.decode(entry.work, `${planId}/${entry.seq}`);
    if (work?.op !== 'remove' && work?.op !== 'move') return undefined;
    names.push(await at(work.source));
  }
  return names.length > 0 ? names : undefined;
}

/** Names joined with ", " up to AUDIT_NAMES_CHARS, the rest counted. */
function listed(names: string[]): string {
  let text = '';
  for (const [i, name] of names.entries()) {
    const next = text === '' ? name : `${text}, ${name}`;
    if (next.length > AUDIT_NAMES_CHARS && text !== '') return `${text} and ${names.length - i} more`;
    text = next;
  }
  return text;
}

function countsText(counts: Record<string, number>, total: number): string {
  const actions = Object.keys(counts).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const parts = actions.filter((a) => (counts[a] ?? 0) > 0).map((a) => `${counts[a]} ${a}`);
  return parts.length > 0 ? parts.join(', ') : `${total} objects`;
}

function rank(action: string): number {
  const i = ORDER.indexOf(action);
  return i === -1 ? ORDER.length : i;
}
