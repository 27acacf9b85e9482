// Resumed copies into s3 on PostgreSQL (test/engine/resume.ts): a worker killed halfway through a 200 MiB
// copy, a destination that forgot the upload, a copy that fails for good.
import { resumeTests } from './resume.js';

await resumeTests('s3', 'postgres');
