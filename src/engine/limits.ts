/**
 * Limits and defaults that the engine (so the CLI) and the extension's settings share. Constants
 * only, so the settings can import them (through pages.ts) without the engine.
 */

/** Browsers open at most 6 HTTP/1.1 connections to one host; more requests would only queue. */
export const MAX_CONNECTIONS_PER_SERVER = 6;

/**
 * The largest block by default. Large enough that a fast line's blocks last their second (block-size.ts):
 * each request costs Chromium's service worker tens of milliseconds, so from one loopback server it
 * read 1 GiB at 108–135 MB/s in 16 MiB requests and at 222–246 MB/s in 64 MiB ones
 * (docs/how-it-works.md). A lost request costs little more: its bytes are stored as they arrive.
 */
export const DEFAULT_MAX_BLOCK_BYTES = 64 * 1024 * 1024;

/** Seconds a connection may go without a byte before it counts as stalled and is asked again. */
export const DEFAULT_STALL_SECONDS = 20;
