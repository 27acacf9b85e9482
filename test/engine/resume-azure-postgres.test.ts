// Resumed copies into azureblob on PostgreSQL (test/engine/resume.ts): a worker killed halfway through a
// 200 MiB copy job.
import { resumeTests } from './resume.js';

await resumeTests('azure', 'postgres');
