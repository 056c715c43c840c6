// Preloaded into a CLI child (NODE_OPTIONS=--require, which also runs in a process started from a
// snapshot) by tests/support/cli.ts: on exit, writes to $STITCH_EXIT_REPORT_FILE the process's peak
// resident set size in bytes, the built-in modules it loaded (what a download costs in memory
// depends on both) and Node's own arguments (whether it started from the launcher's snapshot).
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  const modules = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
  writeFileSync(
    process.env.STITCH_EXIT_REPORT_FILE,
    JSON.stringify({ peakRssBytes: process.resourceUsage().maxRSS * 1024, modules, execArgv: process.execArgv }),
  );
});
