/** Export and import of settings as files, done in the page (no downloads permission needed). */

/** Offers `json` as a file download through a blob URL, then frees the URL. */
export function downloadJson(json: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference once started; give it a moment before revoking.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** `stitch-settings-2024-05-01.json` */
export function exportFilename(now = new Date()): string {
  return `stitch-settings-${now.toISOString().slice(0, 10)}.json`;
}
