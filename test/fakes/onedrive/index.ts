// The fake Microsoft Graph (OneDrive) used by test/stores/onedrive.test.ts.

export { QuickXorHash, quickXorBase64 } from './quickxor.js';
export { FakeOneDrive, type FakeOneDriveOptions, type RecordedRequest } from './server.js';
export { FRAGMENT_GRANULE, SIMPLE_UPLOAD_LIMIT } from './upload.js';
