// test/engine/poison-restart.ts on SQLite.
import { poisonRestart } from './poison-restart.js';

await poisonRestart('sqlite');
