export { CHUNK_GRANULE } from './media.js';
export { FakeGcs, type FakeGcsOptions, type RecordedRequest } from './server.js';
