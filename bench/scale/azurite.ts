// azurite alone, as bench/scale runs it (test/support/azurite.ts: in memory): N blobs of 1 KiB put into
// one container, 16 at a time, with the Azure SDK; prints the rate of each 2,000. The sink of bench/scale's
// S3 → Azure runs, measured without any tool in front of it: if this rate falls as the container fills,
// every tool's does.
//   npx tsx bench/scale/azurite.ts [--blobs 20000]
import { parseArgs } from 'node:util';
import { startAzurite } from '../../test/support/azurite.js';
import { azureService } from '../transfer/data.js';

const { values } = parseArgs({ options: { blobs: { type: 'string', default: '20000' } } });
const N = Number(values.blobs);
const STEP = 2000;
const azurite = await startAzurite();
try {
  const container = azureService(azurite.endpoint).getContainerClient('probe');
  await container.create();
  const body = Buffer.alloc(1024, 46);
  let next = 0;
  let since = performance.now();
  const started = since;
  const worker = async () => {
    while (next < N) {
      const i = next++;
      await container.getBlockBlobClient(`f${Math.floor(i / 1000)}/o${i}`).upload(body, body.length);
      if ((i + 1) % STEP === 0) {
        const now = performance.now();
        console.log(
          `blobs ${i + 1 - STEP + 1}–${i + 1}: ${(STEP / ((now - since) / 1000)).toFixed(0)} blobs/s`,
        );
        since = now;
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  console.log(`${N} blobs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await azurite.close();
}
