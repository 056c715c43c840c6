/** Whether Stitch can fetch from `url`: http and https only. */
export function isHttpUrl(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}

/** `text`, resolved against `base` if given, as an http(s) URL; undefined when it is not one. */
export function parseHttpUrl(text: string, base?: string): URL | undefined {
  try {
    const url = new URL(text, base);
    return isHttpUrl(url) ? url : undefined;
  } catch {
    return undefined;
  }
}
