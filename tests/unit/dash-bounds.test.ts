import { inheritAttributes, stringToMpdXml, toPlaylists, type MpdRepresentationInfo } from 'mpd-parser';
import { describe, expect, it } from 'vitest';
import {
  checkImpliedSegments,
  checkMpdDocument,
  checkMpdText,
  impliedSegments,
  MAX_ADAPTATION_SETS,
  MAX_ATTRIBUTE_CHARS,
  MAX_MPD_CHARS,
  MAX_MPD_MARKUP,
  MAX_PERIODS,
  MAX_REPRESENTATIONS,
  MAX_SEGMENT_URL_CHARS,
  MAX_SEGMENTS,
  MAX_TEMPLATE_WIDTH,
  MAX_TIMELINE_ENTRIES,
} from '../../src/engine/streams/dash-bounds';
import { StreamRefusal } from '../../src/engine/streams/hls-playlist';

const URL_ = 'https://cdn.example/show/manifest.mpd';

/** A static manifest of one adaptation set; `inside` replaces its representation. */
function mpd({ duration = 'PT30S', top = '', period = '', set = '', inside }: Partial<Record<string, string>> = {}): string {
  const representation =
    inside ??
    '<Representation id="v" bandwidth="1000"><SegmentTemplate timescale="1000" duration="2000" media="s$Number$.m4s"/></Representation>';
  return `<MPD type="static" mediaPresentationDuration="${duration}">${top}<Period>${period}<AdaptationSet mimeType="video/mp4">${set}${representation}</AdaptationSet></Period></MPD>`;
}

/** What a bound says of `work`: 'passes', or its refusal's message. */
function verdict(work: () => void): string {
  try {
    work();
    return 'passes';
  } catch (error) {
    expect(error).toBeInstanceOf(StreamRefusal);
    expect((error as StreamRefusal).reason).toBe('too-large');
    return (error as Error).message;
  }
}

const documentVerdict = (text: string) => verdict(() => checkMpdDocument(stringToMpdXml(text), URL_));
const representations = (text: string) => inheritAttributes(stringToMpdXml(text), { manifestUri: URL_ }).representationInfo;
const segmentsVerdict = (text: string) => verdict(() => checkImpliedSegments(representations(text), URL_));

describe("a DASH manifest's text", () => {
  it(`may have ${MAX_MPD_CHARS} characters`, () => {
    const padded = (length: number) => {
      const text = mpd();
      return text.replace('<Period>', `<!--${' '.repeat(length - text.length - 7)}--><Period>`);
    };
    expect(verdict(() => checkMpdText(padded(MAX_MPD_CHARS), URL_))).toBe('passes');
    expect(verdict(() => checkMpdText(padded(MAX_MPD_CHARS + 1), URL_))).toBe(
      `the DASH manifest ${URL_} is 2,097,153 characters long, more than the 2,097,152 a manifest may have: Stitch does not read it`,
    );
  });

  it(`may have ${MAX_MPD_MARKUP} elements and attributes (each < and =)`, () => {
    const base = mpd();
    const markup = [...base].filter((c) => c === '<' || c === '=').length;
    const filled = (count: number) => base.replace('<Period>', `<Period>${'<X/>'.repeat(count - markup)}`);
    expect(verdict(() => checkMpdText(filled(MAX_MPD_MARKUP), URL_))).toBe('passes');
    expect(verdict(() => checkMpdText(filled(MAX_MPD_MARKUP + 1), URL_))).toContain(
      'has 100,001 elements and attributes, more than the 100,000',
    );
  });
});

describe("a DASH manifest's document", () => {
  it(`has attributes and BaseURLs of at most ${MAX_ATTRIBUTE_CHARS} characters`, () => {
    const media = (length: number) => mpd({ inside: `<Representation id="v" media="${'a'.repeat(length)}"/>` });
    expect(documentVerdict(media(MAX_ATTRIBUTE_CHARS))).toBe('passes');
    expect(documentVerdict(media(MAX_ATTRIBUTE_CHARS + 1))).toContain(
      'has a Representation media attribute of 4,097 characters, more than 4,096',
    );
    const base = (length: number) => mpd({ top: `<BaseURL>${'b'.repeat(length)}</BaseURL>` });
    expect(documentVerdict(base(MAX_ATTRIBUTE_CHARS))).toBe('passes');
    expect(documentVerdict(base(MAX_ATTRIBUTE_CHARS + 1))).toContain('has a BaseURL longer than 4,096 characters');
  });

  it(`reads template widths of at most ${MAX_TEMPLATE_WIDTH} digits, in any attribute, entities decoded`, () => {
    const template = (media: string) => mpd({ inside: `<Representation id="v"><SegmentTemplate media="${media}"/></Representation>` });
    expect(documentVerdict(template('s$Number%020d$-$Time%05d$.m4s'))).toBe('passes');
    expect(documentVerdict(template('s$Number%021d$.m4s'))).toContain('asks for 21-digit numbers in a template (SegmentTemplate media)');
    expect(documentVerdict(template('s$Time%0&#51;0000000d$.m4s'))).toContain('asks for 30000000-digit numbers');
    expect(documentVerdict(mpd({ set: '<SegmentTemplate initialization="i$Bandwidth%099d$.mp4"/>' }))).toContain('asks for 99-digit');
  });

  it(`has at most ${MAX_PERIODS} periods and ${MAX_ADAPTATION_SETS} adaptation sets`, () => {
    const periods = (count: number) => mpd().replace(/<Period>.*<\/Period>/, (period) => period.repeat(count));
    expect(documentVerdict(periods(MAX_PERIODS))).toBe('passes');
    expect(documentVerdict(periods(MAX_PERIODS + 1))).toContain('has 101 periods, more than 100');
    const sets = (count: number) => mpd().replace(/<AdaptationSet.*<\/AdaptationSet>/, (set) => set.repeat(count));
    expect(documentVerdict(sets(MAX_ADAPTATION_SETS))).toBe('passes');
    expect(documentVerdict(sets(MAX_ADAPTATION_SETS + 1))).toContain('has more than 1,000 adaptation sets');
  });

  it(`has at most ${MAX_REPRESENTATIONS} representations, counting each BaseURL alternative as mpd-parser copies them`, () => {
    const bases = (count: number) => Array.from({ length: count }, (_, i) => `<BaseURL>https://cdn${i}.example/</BaseURL>`).join('');
    // 10 × 10 × 10 copies of the one representation.
    const thousand = mpd({ top: bases(10), period: bases(10), set: bases(10) });
    expect(documentVerdict(thousand)).toBe('passes');
    expect(representations(thousand)).toHaveLength(MAX_REPRESENTATIONS);
    expect(
      documentVerdict(
        mpd({
          top: bases(10),
          period: bases(10),
          set: bases(10),
          inside: `${mpd().match(/<Representation.*<\/Representation>/)![0]}`.repeat(2),
        }),
      ),
    ).toContain('has more than 1,000 representations (each BaseURL alternative counted)');
  });

  it(`makes at most ${MAX_TIMELINE_ENTRIES} timeline entries in all: each representation inherits its parents'`, () => {
    const timeline = (entries: number) =>
      `<SegmentTemplate media="s$Time$"><SegmentTimeline>${'<S d="1"/>'.repeat(entries)}</SegmentTimeline></SegmentTemplate>`;
    const shared = (representationsCount: number) =>
      mpd({ set: timeline(10_000), inside: '<Representation id="v" bandwidth="1"/>'.repeat(representationsCount) });
    expect(documentVerdict(shared(100))).toBe('passes');
    expect(documentVerdict(shared(101))).toContain('makes more than 1,000,000 SegmentTimeline entries');
  });
});

describe('the segments a DASH manifest implies', () => {
  /** The segments mpd-parser writes out for each representation, against impliedSegments' count. */
  const both = (text: string) => {
    const infos = representations(text);
    const written = toPlaylists(structuredClone(infos)) as { segments?: unknown[]; sidx?: unknown }[];
    return { implied: infos.map((info) => impliedSegments(info).segments), written: written.map((p) => p.segments?.length ?? 0) };
  };
  const template = (attributes: string, timeline = '') =>
    mpd({
      inside: `<Representation id="v" bandwidth="1"><SegmentTemplate media="s$Number$" ${attributes}>${timeline}</SegmentTemplate></Representation>`,
    });

  it.each([
    ['@duration over the presentation', template('timescale="1000" duration="2000"'), 15],
    ['@duration with a last short segment', template('duration="7"'), 5],
    ['@endNumber', template('duration="2" endNumber="4"'), 4],
    ["the period's duration", template('duration="2"').replace('<Period>', '<Period duration="PT10S">'), 5],
    ['repeat counts', template('', '<SegmentTimeline><S t="0" d="2" r="3"/><S d="4"/></SegmentTimeline>'), 5],
    ['a repeat to the next @t', template('', '<SegmentTimeline><S t="0" d="2" r="-1"/><S t="10" d="1"/></SegmentTimeline>'), 6],
    ['a repeat to the end', template('timescale="10"', '<SegmentTimeline><S t="0" d="20" r="-1"/></SegmentTimeline>'), 15],
    ['a gap in the timeline', template('', '<SegmentTimeline><S t="0" d="2" r="1"/><S t="9" d="3" r="-1"/></SegmentTimeline>'), 9],
    ['neither @duration nor a timeline', template(''), 1],
    ['no duration in a timeline entry', template('', '<SegmentTimeline><S t="0" r="-1"/></SegmentTimeline>'), 0],
    [
      'a SegmentList longer than its timeline',
      mpd({
        inside:
          '<Representation id="v"><SegmentList duration="10"><SegmentURL media="a"/><SegmentURL media="b"/><SegmentURL media="c"/><SegmentURL media="d"/></SegmentList></Representation>',
      }),
      3,
    ],
  ])('are counted as mpd-parser writes them out: %s', (_name, text, count) => {
    expect(both(text)).toEqual({ implied: [count], written: [count] });
  });

  it('of a SegmentBase with @duration are counted though one is kept (mpd-parser writes them all out first)', () => {
    const text = mpd({
      inside:
        '<Representation id="v"><BaseURL>f.mp4</BaseURL><SegmentBase duration="2"><Initialization range="0-9"/></SegmentBase></Representation>',
    });
    expect(impliedSegments(representations(text)[0]!).segments).toBe(15);
  });

  it(`are at most ${MAX_SEGMENTS} in all the representations together`, () => {
    const two = (seconds: number) =>
      mpd({
        duration: `PT${seconds}S`,
        inside: template('duration="1"')
          .match(/<Representation.*<\/Representation>/)![0]
          .repeat(2),
      });
    expect(segmentsVerdict(two(MAX_SEGMENTS / 2))).toBe('passes');
    expect(segmentsVerdict(two(MAX_SEGMENTS / 2 + 1))).toContain('implies 100,002 segments, more than the 100,000 a manifest may have');
    expect(segmentsVerdict(template('duration="1"').replace('PT30S', 'PT3000000000S'))).toContain('implies 3,000,000,000 segments');
  });

  it('that would never end are refused, not counted for ever', () => {
    expect(segmentsVerdict(template('', '<SegmentTimeline><S t="0" d="0" r="-1"/></SegmentTimeline>'))).toContain(
      'implies segments without end',
    );
    expect(
      segmentsVerdict(template('startNumber="99999999999999999999"', '<SegmentTimeline><S d="1" r="1"/></SegmentTimeline>')),
    ).toContain('implies segments without end');
  });

  it(`have URLs of at most ${MAX_SEGMENT_URL_CHARS} characters in all, templates written out`, () => {
    const info = (media: string, id = 'v'): MpdRepresentationInfo => ({
      attributes: { id, baseUrl: 'https://c.example/', sourceDuration: 10, bandwidth: 12345 },
      segmentInfo: { template: { duration: 1, media } },
    });
    // 10 segments × (18 base + 2 × written out): $Number$ up to 23 characters, $Bandwidth$ 5, $RepresentationID$ its id's 3.
    expect(impliedSegments(info('s$Number$')).urlChars).toBe(10 * (18 + 2 * 24));
    expect(impliedSegments(info('$RepresentationID$/$Bandwidth$/$$', 'abc')).urlChars).toBe(10 * (18 + 2 * 11));
    const list: MpdRepresentationInfo = {
      attributes: { baseUrl: 'https://c.example/', sourceDuration: 4 },
      segmentInfo: { list: { duration: 1, segmentUrls: [{ media: 'ab' }, { media: 'cde' }] } },
    };
    expect(impliedSegments(list)).toEqual({ segments: 4, urlChars: 18 + 4 + 18 + 6 });
    const long = (seconds: number): MpdRepresentationInfo => ({
      ...info('x'.repeat(4000)),
      attributes: { ...info('').attributes, sourceDuration: seconds },
    });
    // 8,018 characters for each segment (the base, and the URL as written and resolved): 4,184 segments fit in 32 Mi.
    expect(verdict(() => checkImpliedSegments([long(4184)], URL_))).toBe('passes');
    expect(verdict(() => checkImpliedSegments([long(4185)], URL_))).toContain('implies segment URLs of 33,555,330 characters in all');
  });
});
