// Bandwidth caps across two processes on one PostgreSQL database (test/engine/bandwidth.ts).
import { bandwidthTests } from './bandwidth.js';

await bandwidthTests('postgres');
