import { lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { filenameFromUrl, parseHttpUrl, sanitizeFilename } from '../engine';

/**
 * Written into a Metalink's folder when Stitch creates it, holding where the Metalink came from:
 * only such a folder takes that Metalink's files. A folder that was there before may hold ones the
 * system runs programs from (Library/LaunchAgents, a Startup folder), so it is never used.
 * (A Metalink cannot name this file: its names lose their leading dots.)
 */
export const METALINK_MARKER = '.stitch-metalink';

/**
 * The name of the folder for a Metalink's files: the Metalink's file name (from its path or its
 * URL) without its extension (.meta4 or .metalink, what made it a Metalink), made safe like any file name.
 */
export function metalinkFolderName(source: string): string {
  const url = parseHttpUrl(source);
  const file = url ? (filenameFromUrl(url.href) ?? '') : basename(source);
  return sanitizeFilename(file.slice(0, file.length - extname(file).length), 'metalink');
}

/** `stem + ext`, else `stem (1) + ext`, `stem (2) + ext`, …: the first name `fits` accepts. */
export function numberedName(stem: string, ext: string, fits: (name: string) => boolean): string {
  for (let i = 0; ; i++) {
    const name = i === 0 ? stem + ext : `${stem} (${i})${ext}`;
    if (fits(name)) return name;
  }
}

/**
 * The folder in `base` for the files of the Metalink `source`: NAME (metalinkFolderName), else
 * NAME (1), …, the first that Stitch made for this same Metalink (a rerun resumes there) or that
 * does not exist yet (it is made, with its marker). Anything else of that name is left alone.
 */
export function claimMetalinkFolder(base: string, source: string): string {
  const marker = `${parseHttpUrl(source)?.href ?? resolve(source)}\n`;
  const name = numberedName(metalinkFolderName(source), '', (candidate) => {
    const folder = join(base, candidate);
    return holdsMarker(folder, marker) || created(folder, marker);
  });
  return join(base, name);
}

/** Whether `folder` is a folder (not a link to one) whose marker says `marker`. */
function holdsMarker(folder: string, marker: string): boolean {
  if (!lstatSync(folder, { throwIfNoEntry: false })?.isDirectory()) return false;
  const path = join(folder, METALINK_MARKER);
  const stats = lstatSync(path, { throwIfNoEntry: false });
  // The size first: a pipe, or a huge file, under the marker's name is never read.
  return stats?.isFile() === true && stats.size === Buffer.byteLength(marker) && readFileSync(path, 'utf8') === marker;
}

/** Makes `folder` and its marker; false when the name is taken (mkdir replaces nothing and follows no link). */
function created(folder: string, marker: string): boolean {
  try {
    mkdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  writeFileSync(join(folder, METALINK_MARKER), marker, { flag: 'wx' });
  return true;
}
