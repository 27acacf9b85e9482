// Resumed copies into azureblob (test/engine/resume.ts): a worker killed halfway through a 200 MiB
// copy job. On SQLite and PostgreSQL.
import { resumeTests } from './resume.js';

await resumeTests('azure');
