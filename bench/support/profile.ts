// Summarises a V8 CPU profile (node --cpu-prof) as text: the functions with the most self time, and
// the inclusive time of each function whose name or file matches a --focus word. A flame graph reduced
// to what fits in docs/performance.md; open the .cpuprofile in Chrome DevTools for the whole picture.
//   npx tsx bench/support/profile.ts FILE.cpuprofile [--top 25] [--focus authenticate,onResponse]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, focus: { type: 'string', default: '' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: profile.ts FILE.cpuprofile');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const self = new Map<number, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  self.set(id, (self.get(id) ?? 0) + dt);
  total += dt;
});

const label = (n: Node) => {
  const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '~/');
  const short = url.replace(/^.*\/(src|dist|bench)\//, '$1/');
  return `${n.callFrame.functionName || '(anonymous)'} ${short}:${n.callFrame.lineNumber + 1}`;
};

// Self time by function (merging the nodes of one function).
const selfByLabel = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id);
  if (n) selfByLabel.set(label(n), (selfByLabel.get(label(n)) ?? 0) + t);
}
const idle = [...selfByLabel].filter(([l]) => l.startsWith('(idle)')).reduce((a, [, t]) => a + t, 0);
const busy = total - idle;
const pct = (t: number) => `${((100 * t) / busy).toFixed(1)}%`;
console.log(`${(busy / 1e6).toFixed(2)} s busy of ${(total / 1e6).toFixed(2)} s profiled\n`);
console.log('| self | function |\n|---:|---|');
for (const [l, t] of [...selfByLabel]
  .filter(([l]) => !l.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(values.top))) {
  console.log(`| ${pct(t)} | \`${l}\` |`);
}

// Inclusive time of matching functions: each sample counted once per function on its stack.
const words = values.focus.split(',').filter(Boolean);
if (words.length > 0) {
  const inclusive = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at);
      if (!n) break;
      const l = label(n);
      if (!seen.has(l) && words.some((w) => l.includes(w))) {
        seen.add(l);
        inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
      }
    }
  });
  console.log('\n| inclusive | function |\n|---:|---|');
  for (const [l, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
    console.log(`| ${pct(t)} | \`${l}\` |`);
  }
}
