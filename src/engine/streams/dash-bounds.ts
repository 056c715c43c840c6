import type { MpdAttributes, MpdRepresentationInfo, MpdTimelineEntry } from 'mpd-parser';
import { StreamRefusal } from './hls-playlist';

/**
 * What a DASH manifest may ask of Stitch, checked before mpd-parser does the work: a few hundred
 * bytes of XML can otherwise imply billions of segments, megabyte-long URLs copied into each of
 * them, or a DOM node for every byte. Each bound is far above what real streams use; past one, the
 * manifest is refused in words at once.
 */

/** The manifest's text. Real manifests are kilobytes; a long SegmentList of many qualities, a megabyte. */
export const MAX_MPD_CHARS = 2 * 1024 * 1024;
/**
 * Elements and attributes, counted before the XML is parsed (each `<` and `=`): the parser keeps
 * about 500 bytes for each element, so 100,000 of them stay near 50 MB.
 */
export const MAX_MPD_MARKUP = 100_000;
/** An attribute's value or a BaseURL's text: URLs longer than a few kilobytes are not sent by browsers either. */
export const MAX_ATTRIBUTE_CHARS = 4096;
/** A template's `%0Nd`: 20 digits hold any 64-bit number, so no stream needs a wider one. */
export const MAX_TEMPLATE_WIDTH = 20;
/** Periods (chapters, ad breaks): tens in real manifests. */
export const MAX_PERIODS = 100;
/** Adaptation sets in all periods together: a handful of tracks in each period. */
export const MAX_ADAPTATION_SETS = 1000;
/**
 * Representations in all periods together, each BaseURL alternative counted once (mpd-parser
 * copies a representation for each): tens of qualities and languages in each period.
 */
export const MAX_REPRESENTATIONS = 1000;
/**
 * SegmentTimeline entries mpd-parser copies into the representations (each inherits its
 * parents' entries): a timeline of hours with an entry per segment, shared by tens of qualities.
 */
export const MAX_TIMELINE_ENTRIES = 1_000_000;
/**
 * Segments the manifest implies in all its representations together (mpd-parser writes out
 * each): 100,000 are 55 hours of 2-second segments in one quality, or 5 hours in each of eleven.
 */
export const MAX_SEGMENTS = 100_000;
/** The characters of those segments' URLs (each is kept twice, as written and resolved): about 32 MB. */
export const MAX_SEGMENT_URL_CHARS = 32 * 1024 * 1024;
/** A `$Number$` or `$Time$` value written out: at most this long (`-1.2345678901234567e+21`). */
const MAX_NUMBER_CHARS = 23;
/** mpd-parser's template identifiers (segmentTemplate.js): `$Name$` or `$Name%0Nd$`. */
const TEMPLATE_IDENTIFIER = /\$([A-z]*)(?:%0([0-9]+)d)?\$/g;

function refuse(url: string, what: string): never {
  throw new StreamRefusal('too-large', `the DASH manifest ${url} ${what}: Stitch does not read it`);
}

const count = (n: number) => n.toLocaleString('en-US');

/** The manifest's size and markup, before any of it is parsed. */
export function checkMpdText(text: string, url: string): void {
  if (text.length > MAX_MPD_CHARS) {
    refuse(url, `is ${count(text.length)} characters long, more than the ${count(MAX_MPD_CHARS)} a manifest may have`);
  }
  let markup = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x3c || code === 0x3d) markup++;
  }
  if (markup > MAX_MPD_MARKUP) {
    refuse(url, `has ${count(markup)} elements and attributes, more than the ${count(MAX_MPD_MARKUP)} a manifest may have`);
  }
}

const children = (element: Element, name: string) =>
  Array.from(element.childNodes).filter((node): node is Element => node.nodeName === name);

/**
 * The parsed document, before mpd-parser reads it: every attribute's and BaseURL's length, every
 * template's widths, and how many periods, adaptation sets, representations (with the copies
 * BaseURL alternatives make) and timeline entries mpd-parser would make of it.
 */
export function checkMpdDocument(mpd: Element, url: string): void {
  const stack: Element[] = [mpd];
  for (let element = stack.pop(); element; element = stack.pop()) {
    for (const attribute of Array.from(element.attributes)) checkAttribute(element.nodeName, attribute.name, attribute.value, url);
    if (element.nodeName === 'BaseURL' && (element.textContent ?? '').length > MAX_ATTRIBUTE_CHARS) {
      refuse(url, `has a BaseURL longer than ${count(MAX_ATTRIBUTE_CHARS)} characters`);
    }
    for (const node of Array.from(element.childNodes)) if (node.nodeType === 1) stack.push(node as Element);
  }
  const periods = children(mpd, 'Period');
  if (periods.length > MAX_PERIODS) refuse(url, `has ${count(periods.length)} periods, more than ${MAX_PERIODS}`);
  let adaptationSets = 0;
  let representations = 0;
  let timelineEntries = 0;
  const top = copiesOf(mpd);
  for (const period of periods) {
    const sets = children(period, 'AdaptationSet');
    adaptationSets += sets.length;
    if (adaptationSets > MAX_ADAPTATION_SETS) refuse(url, `has more than ${count(MAX_ADAPTATION_SETS)} adaptation sets`);
    const periodCopies = top * copiesOf(period);
    const periodEntries = entriesOf(period);
    for (const set of sets) {
      const setCopies = periodCopies * copiesOf(set);
      const inherited = periodEntries + entriesOf(set);
      for (const representation of children(set, 'Representation')) {
        const made = setCopies * copiesOf(representation);
        representations += made;
        if (representations > MAX_REPRESENTATIONS) {
          refuse(url, `has more than ${count(MAX_REPRESENTATIONS)} representations (each BaseURL alternative counted)`);
        }
        timelineEntries += made * (inherited + entriesOf(representation));
        if (timelineEntries > MAX_TIMELINE_ENTRIES) {
          refuse(url, `makes more than ${count(MAX_TIMELINE_ENTRIES)} SegmentTimeline entries in its representations`);
        }
      }
    }
  }
}

/** The copies mpd-parser makes of what is below an element: one for each of its BaseURLs. */
const copiesOf = (element: Element) => Math.max(1, children(element, 'BaseURL').length);

/** The SegmentTimeline entries an element gives what is below it (mpd-parser's getSegmentInformation). */
function entriesOf(element: Element): number {
  const parent = children(element, 'SegmentList')[0] ?? children(element, 'SegmentTemplate')[0];
  const timeline = parent && children(parent, 'SegmentTimeline')[0];
  return timeline ? children(timeline, 'S').length : 0;
}

function checkAttribute(element: string, name: string, value: string, url: string): void {
  if (value.length > MAX_ATTRIBUTE_CHARS) {
    refuse(url, `has a ${element} ${name} attribute of ${count(value.length)} characters, more than ${count(MAX_ATTRIBUTE_CHARS)}`);
  }
  for (const [, , width] of value.matchAll(TEMPLATE_IDENTIFIER)) {
    if (width !== undefined && Number(width) > MAX_TEMPLATE_WIDTH) {
      refuse(url, `asks for ${width}-digit numbers in a template (${element} ${name}); at most ${MAX_TEMPLATE_WIDTH} digits are read`);
    }
  }
}

/**
 * The representations as mpd-parser read them, before it writes out their segments: how many
 * segments (and characters of their URLs) they imply in all, counted as mpd-parser counts them.
 */
export function checkImpliedSegments(representations: readonly MpdRepresentationInfo[], url: string): void {
  let segments = 0;
  let urlChars = 0;
  for (const representation of representations) {
    const implied = impliedSegments(representation);
    segments += implied.segments;
    urlChars += implied.urlChars;
  }
  if (!Number.isFinite(segments)) refuse(url, 'implies segments without end');
  if (segments > MAX_SEGMENTS) refuse(url, `implies ${count(segments)} segments, more than the ${count(MAX_SEGMENTS)} a manifest may have`);
  if (urlChars > MAX_SEGMENT_URL_CHARS) {
    refuse(url, `implies segment URLs of ${count(urlChars)} characters in all, more than ${count(MAX_SEGMENT_URL_CHARS)}`);
  }
}

/**
 * The segments one representation implies (and their URLs' characters), by the rules of
 * mpd-parser's toPlaylists: a SegmentTemplate, else a SegmentBase, else a SegmentList; their
 * @duration (and @endNumber, the period's or the presentation's duration), else their
 * SegmentTimeline with its repeat counts. `Infinity` when it would never stop. A static manifest's.
 */
export function impliedSegments({ attributes, segmentInfo }: MpdRepresentationInfo): { segments: number; urlChars: number } {
  const kind = segmentInfo.template ? 'template' : segmentInfo.base ? 'base' : segmentInfo.list ? 'list' : undefined;
  if (!kind) return { segments: 0, urlChars: 0 };
  const merged: MpdAttributes = { ...attributes, ...segmentInfo[kind] };
  const startNumber = merged.startNumber ?? 1;
  // Past 2^52, mpd-parser's `number++` no longer moves and its loop never ends.
  if (Math.abs(startNumber) > 2 ** 52) return { segments: Infinity, urlChars: 0 };
  const timeline = segmentInfo.segmentTimeline;
  const segments = merged.duration ? byDuration(merged) : timeline && kind !== 'base' ? byTimeline(merged, timeline) : 1;
  const base = merged.baseUrl?.length ?? 0;
  if (kind === 'base') return { segments, urlChars: 2 * base };
  if (kind === 'template') return { segments, urlChars: segments * (base + 2 * templateLength(merged)) };
  const listed = (segmentInfo.list?.segmentUrls ?? []).slice(0, segments);
  return { segments, urlChars: listed.reduce((sum, segment) => sum + base + 2 * (segment.media?.length ?? 0), 0) };
}

/** How many times mpd-parser's `for (i = 0; i < end; i++)` runs. */
const iterations = (end: number) => (end > 0 ? Math.ceil(end) : 0);

/** durationTimeParser.js's static range: @endNumber, else the period's or the presentation's duration over @duration. */
function byDuration(attributes: MpdAttributes): number {
  const { duration = 0, timescale = 1, periodDuration, sourceDuration } = attributes;
  const endNumber = attributes.endNumber === undefined ? NaN : parseInt(String(attributes.endNumber), 10);
  const seconds = duration / timescale;
  const end = !Number.isNaN(endNumber) ? endNumber : (typeof periodDuration === 'number' ? periodDuration : sourceDuration) / seconds;
  return iterations(end);
}

/** timelineTimeParser.js: each S is r + 1 segments; r < 0 runs to the next S's @t, or to the end of the presentation. */
function byTimeline(attributes: MpdAttributes, timeline: readonly MpdTimelineEntry[]): number {
  const { sourceDuration, timescale = 1 } = attributes;
  let total = 0;
  let time = -1;
  for (let i = 0; i < timeline.length; i++) {
    const { d, r, t } = timeline[i]!;
    const repeat = r || 0;
    const start = t || 0;
    if (time < 0 || start > time) time = start;
    const next = timeline[i + 1];
    const span = next ? next.t! - time : sourceDuration * timescale - time;
    const made = iterations(repeat < 0 ? span / d! : repeat + 1);
    total += made;
    if (!Number.isFinite(total)) return Infinity;
    time += made * d!;
  }
  return total;
}

/** The longest a template's URL gets once its identifiers are written out (segmentTemplate.js). */
function templateLength({ media = '', id, bandwidth }: MpdAttributes): number {
  let length = media.length;
  for (const [match, identifier] of media.matchAll(TEMPLATE_IDENTIFIER)) {
    const value =
      match === '$$'
        ? 1
        : identifier === 'RepresentationID'
          ? String(id ?? match).length
          : identifier === 'Bandwidth'
            ? String(bandwidth ?? 0).length
            : identifier === 'Number' || identifier === 'Time'
              ? MAX_NUMBER_CHARS
              : match.length;
    length += value - match.length;
  }
  return length;
}
