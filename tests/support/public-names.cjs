// Preloaded into a CLI child (NODE_OPTIONS=--require) by tests that need hosts of each kind on a
// loopback-only machine. The CLI checks the address it connects to, not only the name
// (src/cli/http1-client.ts), so names resolve as they would out there, and a NAT brings them home:
// - `*.public.test` resolve to 198.51.100.1, a public (documentation) address, which the CLI's
//   check accepts. Once the CLI's lookup has answered, just before the socket connects, that
//   address is rewritten to 127.0.0.1, as a NAT rewrites a destination past the host: the CLI
//   judges these hosts public by name and by address while every byte stays on loopback.
// - `*.rebind.test` resolve to 127.0.0.2: public-looking names aimed at a local address.
// - `*.flip.test` rebind: each name's first lookup in the process gives 198.51.100.1 (so
//   127.0.0.1, as above), every later one 127.0.0.2.
// IP addresses in URLs are not looked up, so not rewritten. Nothing else changes.
const dns = require('node:dns');
const net = require('node:net');

const PUBLIC = '198.51.100.1';
const NAT_TARGET = '127.0.0.1';
const LOCAL = '127.0.0.2';
const flipped = new Set();

/** The address a test name resolves to, or undefined for any other name. */
function testAddress(hostname) {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name.endsWith('.public.test')) return PUBLIC;
  if (name.endsWith('.rebind.test')) return LOCAL;
  if (!name.endsWith('.flip.test')) return undefined;
  const first = !flipped.has(name);
  flipped.add(name);
  return first ? PUBLIC : LOCAL;
}

const lookup = dns.lookup;
dns.lookup = function testLookup(hostname, options, callback) {
  const address = typeof hostname === 'string' ? testAddress(hostname) : undefined;
  if (address === undefined) return lookup.apply(this, arguments);
  const done = typeof options === 'function' ? options : callback;
  const all = typeof options === 'object' && options !== null && options.all;
  process.nextTick(() => (all ? done(null, [{ address, family: 4 }]) : done(null, address, 4)));
  return {};
};

/** The NAT: the public stand-in becomes the loopback, in either form a lookup answers with. */
function translate(address) {
  if (Array.isArray(address)) return address.map((a) => (a.address === PUBLIC ? { ...a, address: NAT_TARGET } : a));
  return address === PUBLIC ? NAT_TARGET : address;
}

// Every socket's lookup (the CLI's own checking one, else dns.lookup) is wrapped, so the rewrite
// comes after the CLI has seen and judged the address. tls.connect connects through this too.
const translated = Symbol('translated by public-names.cjs');
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function natConnect(...args) {
  // net.connect passes its arguments normalized, as an array holding the options first.
  const options = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (options !== null && typeof options === 'object' && typeof options.host === 'string' && net.isIP(options.host) === 0) {
    const resolve = options.lookup ?? dns.lookup;
    if (!resolve[translated]) {
      const natLookup = (hostname, lookupOptions, callback) =>
        resolve(hostname, lookupOptions, (error, address, family) => callback(error, error ? address : translate(address), family));
      natLookup[translated] = true;
      options.lookup = natLookup;
    }
  }
  return connect.apply(this, args);
};
