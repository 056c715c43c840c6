/**
 * Limits and defaults that the engine (so the CLI) and the extension's settings share. Constants
 * only, so the settings can import them (through pages.ts) without the engine.
 */

/** Browsers open at most 6 HTTP/1.1 connections to one host; more requests would only queue. */
export const MAX_CONNECTIONS_PER_SERVER = 6;

/** The largest block by default: bounds what one lost or late request costs. */
export const DEFAULT_MAX_BLOCK_BYTES = 16 * 1024 * 1024;

/** Seconds a connection may go without a byte before it counts as stalled and is asked again. */
export const DEFAULT_STALL_SECONDS = 20;
