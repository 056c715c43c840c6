import { execFileSync } from 'node:child_process';

/** Resident memory (bytes) of every process whose command line mentions `marker` (the profile dir). */
export function rssOf(marker: string): number {
  const out = execFileSync('ps', ['-eo', 'rss=,args='], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  let kib = 0;
  for (const line of out.split('\n')) {
    if (!line.includes(marker)) continue;
    kib += Number(line.trim().split(/\s+/, 1)[0]) || 0;
  }
  return kib * 1024;
}

/** Samples rssOf(marker) until stopped; returns the peak. */
export function sampleMemory(marker: string, everyMs = 500): { stop(): { peak: number; samples: number } } {
  let peak = 0;
  let samples = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(marker));
    samples++;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { peak, samples };
    },
  };
}
