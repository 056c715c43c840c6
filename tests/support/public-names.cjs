// Preloaded into a CLI child (NODE_OPTIONS=--require) by tests that need "public" hosts on a
// loopback-only machine: names under `.public.test` resolve to 127.0.0.1, so the CLI judges them
// public by name (request-trust.ts) while every byte stays on loopback. Nothing else changes.
const dns = require('node:dns');

const lookup = dns.lookup;
dns.lookup = function publicTestLookup(hostname, options, callback) {
  if (typeof hostname !== 'string' || !/\.public\.test$/i.test(hostname)) return lookup.apply(this, arguments);
  const done = typeof options === 'function' ? options : callback;
  const all = typeof options === 'object' && options !== null && options.all;
  process.nextTick(() => (all ? done(null, [{ address: '127.0.0.1', family: 4 }]) : done(null, '127.0.0.1', 4)));
  return {};
};
