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

/** Whether two URLs have one origin (scheme, host and port); false when either is not a URL. */
export function sameOrigin(a: string, b: string): boolean {
  try {
    const origin = new URL(a).origin;
    return origin !== 'null' && origin === new URL(b).origin;
  } catch {
    return false;
  }
}
