/**
 * The engine's small, dependency-free helpers that the extension's pages and the settings use.
 * Pages import these from here, not from index.ts: through the index the bundler would load
 * the whole engine chunk into the popup and the options page.
 */
export { formatBytes, scaleBytes } from './format-bytes';
export { isHttpUrl, parseHttpUrl } from './http/http-url';
export { DEFAULT_MAX_BLOCK_BYTES, DEFAULT_STALL_SECONDS, MAX_CONNECTIONS_PER_SERVER } from './limits';
