// test/engine/poison-restart.ts on PostgreSQL.
import { poisonRestart } from './poison-restart.js';

await poisonRestart('postgres');
