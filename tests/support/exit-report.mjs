// Preloaded into a CLI child (node --import) by tests/support/cli.ts: on exit, writes to
// $STITCH_EXIT_REPORT_FILE the process's peak resident set size in bytes and the built-in
// modules it loaded (what a download costs in memory depends on both).
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const modules = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
  writeFileSync(process.env.STITCH_EXIT_REPORT_FILE, JSON.stringify({ peakRssBytes: process.resourceUsage().maxRSS * 1024, modules }));
});
