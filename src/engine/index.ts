export { DownloadJob, type JobSnapshot } from './job';
export type { ExpectedIntegrity, JobState, JobStatus } from './job-state';
export { DownloadError, formatBytes, type DownloadErrorCode } from './errors';
export { DEFAULT_OPTIONS, type EngineOptions } from './options';
export type { RemoteFile } from './remote-file';
export type { Playback } from './scheduler/scheduler';
export type { MirrorReport } from './scheduler/mirror-state';
export { RateLimiter } from './rate-limiter';
