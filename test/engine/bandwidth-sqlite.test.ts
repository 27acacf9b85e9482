// Bandwidth caps across two processes on one SQLite file (test/engine/bandwidth.ts).
import { bandwidthTests } from './bandwidth.js';

await bandwidthTests('sqlite');
