// The engine's public API: the CLI, the background and the storage implementations import
// from here, never from deep paths.
export { DownloadJob, type JobSnapshot } from './job';
export type { ExpectedIntegrity, JobState, JobStatus } from './job-state';
export { DownloadError, formatBytes, type DownloadErrorCode } from './errors';
export { DEFAULT_OPTIONS, type EngineOptions } from './options';
export type { RemoteFile } from './remote-file';
export type { Playback } from './scheduler/scheduler';
export type { MirrorReport } from './scheduler/mirror-state';
export { RateLimiter } from './rate-limiter';
export { isQuotaError, type DownloadStore, type JobStateRecord } from './store';
export { contiguousPrefix, missingRanges, normalizeRanges, rangesLength, type ByteRange } from './ranges';
export { filenameFromUrl, parseContentLength, parseContentRange, sanitizeFilename } from './http/headers';
export { parseChecksumArgument } from './integrity/expected';
export type { DigestAlgorithm } from './integrity/digests';
export type { Hasher, HasherFactory } from './integrity/hasher';
export { fetchMetalink, fromMetalinkFile } from './sources/advertised';
export { isSafeMetalinkName, parseMetalink, type MetalinkFile } from './sources/metalink';
