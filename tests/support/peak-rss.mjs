// Preloaded into a CLI child (node --import) by tests/support/cli.ts: on exit, writes the
// process's peak resident set size in bytes to $STITCH_PEAK_RSS_FILE.
import { writeFileSync } from 'node:fs';

process.on('exit', () => writeFileSync(process.env.STITCH_PEAK_RSS_FILE, String(process.resourceUsage().maxRSS * 1024)));
