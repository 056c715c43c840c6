// The engine's public API: the CLI, the background and the storage implementations import
// from here, never from deep paths.
export { DownloadJob, isRetrying, type JobSnapshot } from './job';
export type { ExpectedIntegrity, JobError, JobState, JobStatus } from './job-state';
export { DownloadError, type DownloadErrorCode } from './errors';
export { formatBytes } from './format-bytes';
export { isHttpUrl, parseHttpUrl, sameOrigin } from './http/http-url';
export { DEFAULT_MAX_BLOCK_BYTES, MAX_CONNECTIONS_PER_SERVER } from './limits';
export {
  DEFAULT_OPTIONS,
  type Clock,
  type EngineDependencies,
  type EngineOptions,
  type EngineTunables,
  type RequestContext,
} from './options';
export { isLocalHost, sourceRefusal, trustedFetch, type TrustScope } from './http/request-trust';
export type { HttpFetch, HttpRequest, HttpResponse } from './http/fetch-port';
export { RefusedResponse } from './http/fetch-port';
export { countryOfLocale, type SourceHint } from './sources/hrw';
export type { RemoteFile } from './remote-file';
export type { Playback } from './scheduler/policies/views';
export { checkRelink, type RelinkVerdict } from './relink';
export type { MirrorReport } from './scheduler/loop/mirror-state';
export { englishDrop, englishNotice, type DropReason, type JobNotice, type StoredNotice } from './notice';
export { RateLimiter } from './rate-limiter';
export { isQuotaError, type DownloadStore, type JobStateRecord } from './store';
export { contiguousPrefix, missingRanges, normalizeRanges, rangesLength, removeRange, type ByteRange } from './ranges';
export { filenameFromUrl, parseContentDisposition, parseContentLength, parseContentRange, sanitizeFilename } from './http/headers';
export { parseChecksumArgument, toHexDigests, type HexDigest } from './integrity/expected';
export type { DigestAlgorithm } from './integrity/digests';
export type { Hasher, HasherFactory } from './integrity/hasher';
export { advertisedSources, fetchMetalink, fromMetalinkFile, METALINK_LIMITS } from './sources/advertised';
export { readResponseFacts } from './http/response-facts';
export { isSafeMetalinkName, parseMetalink, type MetalinkFile } from './sources/metalink';
export { planHlsStream, readHlsStream, type StreamPlan } from './streams/stream-plan';
export { looksLikeStreamManifest, planStream } from './streams/plan-stream';
export { readStreamOffer, type StreamOffer } from './streams/stream-offer';
export { recordLiveStream, type LiveRecording } from './streams/live-recorder';
export { looksLikeHlsPlaylist, StreamRefusal, type HlsVariant, type RefusalReason } from './streams/hls-playlist';
export type { StreamLayout, StreamTimeline } from './streams/stream-layout';
export { streamStem, timelineOf } from './streams/stream-layout';
