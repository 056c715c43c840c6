// hls.js's package maps `hls.js/light` to its light build but names no types for it: they are the full build's.
declare module 'hls.js/light' {
  export * from 'hls.js';
  export { default } from 'hls.js';
}
