// bench/transfer, the move item (figure in docs/performance.md, "A prefix move"): a prefix move of N
// small objects (a transfer over several objects, run object by object by the job engine: each copied,
// verified, then its source deleted) beside a prefix copy job of the same objects, S3 to S3 on one
// s3rver, with the same ferry server and settings as bench/transfer's other items. Each run seeds two
// identical source buckets, runs the copy job from one and the move from the other (interleaved: the
// order alternates by run), and prints both times and their ratio; the median ratio at the end.
//   npm run bench:move [-- --objects 600 --runs 3 --skip-build]
import { parseArgs } from 'node:util';
import { buildDist, startFerry, startS3rverProcess } from '../support/processes.js';
import { seedBucket } from '../support/s3.js';
import { createLocations, prefixCopy, prefixMove } from './ferry.js';
import { CONCURRENCY } from './peers.js';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '600' },
    runs: { type: 'string', default: '3' },
    'skip-build': { type: 'boolean', default: false },
  },
});
const OBJECTS = Number(values.objects);
const RUNS = Number(values.runs);
if (!values['skip-build']) buildDist();

const s3 = await startS3rverProcess();
const ferry = await startFerry({
  env: {
    FERRY_EGRESS_ALLOW: '127.0.0.1/32',
    FERRY_LOG_LEVEL: 'warn',
    FERRY_WORKER_CONCURRENCY: String(CONCURRENCY),
    FERRY_LOCATION_CONCURRENCY: String(CONCURRENCY),
  },
});
const ratios: number[] = [];
try {
  const loc = await createLocations(ferry, s3.endpoint, 'http://127.0.0.1:1');
  const keys = Array.from({ length: OBJECTS }, (_, i) => `src/d${i % 10}/k${i}.txt`);
  for (let run = 0; run < RUNS; run++) {
    const tag = `${Date.now().toString(36)}-${run}`;
    const [copySrc, moveSrc, copyDst, moveDst] = ['cs', 'ms', 'cd', 'md'].map((p) => `bench-${p}-${tag}`);
    await seedBucket(s3.endpoint, copySrc as string, keys, { body: (k) => `${k} `.repeat(200) });
    await seedBucket(s3.endpoint, moveSrc as string, keys, { body: (k) => `${k} `.repeat(200) });
    await seedBucket(s3.endpoint, copyDst as string, []);
    await seedBucket(s3.endpoint, moveDst as string, []);
    const copy = () => prefixCopy(ferry, `${loc.s3a}:${copySrc}/src/`, `${loc.s3b}:${copyDst}/src/`, OBJECTS);
    const move = () =>
      prefixMove(ferry, `bench-s3-a/${moveSrc}/src/**`, `bench-s3-b/${moveDst}/src/`, OBJECTS);
    const [first, second] = run % 2 === 0 ? [copy, move] : [move, copy];
    const a = await first();
    const b = await second();
    const [c, m] = run % 2 === 0 ? [a, b] : [b, a];
    const ratio = m.seconds / c.seconds;
    ratios.push(ratio);
    console.log(
      `run ${run + 1}: copy job ${c.seconds.toFixed(2)} s, prefix move ${m.seconds.toFixed(2)} s, move/copy ${ratio.toFixed(2)}`,
    );
  }
  const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)] as number;
  console.log(`${OBJECTS} objects, ${RUNS} runs: median move/copy ratio ${median.toFixed(2)}`);
} finally {
  await ferry.close();
  await s3.close();
}
