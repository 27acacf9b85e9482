// The fake Google Drive API v3 used by test/stores/drive.test.ts.
export { FakeDrive, type FakeDriveOptions, type RecordedRequest } from './server.js';
export { FOLDER_MIME } from './state.js';
export { CHUNK_GRANULARITY, SINGLE_REQUEST_LIMIT } from './upload.js';
