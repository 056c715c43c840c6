/**
 * The media type of a job's file: the server's Content-Type when it names audio or video, else
 * a guess from the file name (servers often say application/octet-stream for videos). Pure, no
 * DOM: the popup, the player and the background's stream route share it.
 */

const BY_EXTENSION: Record<string, string> = {
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  ogv: 'video/ogg',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  aac: 'audio/aac',
  weba: 'audio/webm',
};

const ALIASES: Record<string, string> = {
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/x-flac': 'audio/flac',
  'application/ogg': 'audio/ogg',
  'video/x-m4v': 'video/mp4',
  'audio/x-m4a': 'audio/mp4',
};

/** `video/webm`, `audio/mpeg`…, or undefined when the file does not look like audio or video. */
export function mediaTypeOf(contentType: string | undefined, filename: string | undefined): string | undefined {
  const declared = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  const type = ALIASES[declared] ?? declared;
  if (type.startsWith('video/') || type.startsWith('audio/')) return type;
  const extension = /\.([a-z0-9]+)$/i.exec(filename ?? '')?.[1]?.toLowerCase();
  return extension === undefined ? undefined : BY_EXTENSION[extension];
}

/** The URL of the player page for a job (from an extension page: a relative URL works). */
export function playerPath(query: { id: string } | { url: string }): string {
  return 'id' in query ? `player.html?id=${encodeURIComponent(query.id)}` : `player.html?url=${encodeURIComponent(query.url)}`;
}
