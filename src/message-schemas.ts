/**
 * One valibot schema per message a page sends the background (see messages.ts for the protocol):
 * each request type with its fields, and what a player page posts on its port. The types in
 * messages.ts are derived from these (`v.InferInput`: what a page sends), so each message is
 * declared once. Only the receivers import this module (the background's request handler and
 * playback hub): the pages import messages.ts, which imports it for its types alone, so their
 * bundles do not carry valibot.
 *
 * A field a schema normalizes (a URL, a site, a file name) reaches the handler in its normal
 * form. A malformed message's first issue says what is wrong, in the user's words where the user
 * can cause it (a URL typed in, a site, a speed limit), in English for what only a bug can.
 */
import * as v from 'valibot';
import { isHttpUrl } from './engine/pages';
import type { Replies } from './messages';
import { normalizeMirrorRule, type MirrorRule } from './settings/schema';
import { t } from './words/i18n';

/** A non-empty string; "missing <name>" otherwise. */
const present = (name: string) => v.pipe(v.string(`missing ${name}`), v.nonEmpty(`missing ${name}`));
const ID = present('id');

/** An absolute http(s) URL, trimmed, in its normal form (`href`). */
const HTTP_URL = v.pipe(
  v.string(() => t('errorNotUrl', '')),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const text = dataset.value.trim();
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      addIssue({ message: t('errorNotUrl', text) });
      return NEVER;
    }
    if (!isHttpUrl(url)) {
      addIssue({ message: t('errorNotHttp') });
      return NEVER;
    }
    return url.href;
  }),
);

/** A host with an optional port, as the user typed it; the host alone, lower-case, comes out. */
const SITE = v.pipe(
  v.string(() => t('errorNotSite', '')),
  v.trim(),
  v.toLowerCase(),
  v.regex(/^[a-z0-9.-]+(:\d+)?$/, (issue) => t('errorNotSite', String(issue.input))),
  v.transform((host) => host.replace(/:\d+$/, '')),
);

const SPEED_LIMIT_WORDS = 'a speed limit is a number above 0, or none';

const unknownAction = (issue: v.BaseIssue<unknown>) => `unknown action ${String(issue.input)}`;

/**
 * `start-now` starts a queued job at once, past the concurrent-downloads limit.
 * `cancel` keeps the job (paused, its bytes stored) for `UNDO_MS`, shown with `undoUntil`;
 * `undo` within that time brings it back as it was; after it, the job and its bytes are gone.
 */
export const JOB_ACTION = v.picklist(['start-now', 'pause', 'resume', 'cancel', 'retry', 'undo'], unknownAction);
export const ARIA2_ACTION = v.picklist(['pause', 'resume', 'remove', 'run-here'], unknownAction);

/** A rule the mirror test can use (the test puts it in its normal form itself). */
const MIRROR_RULE = v.custom<MirrorRule>(
  (rule) => normalizeMirrorRule(rule) !== undefined,
  () => t('mirrorTestInvalidRule'),
);

/**
 * A request of type `type` with these fields. A missing field is judged by its own schema, as
 * undefined, so that it is refused in the field's words ("missing id"), not valibot's.
 */
const request = <T extends string, E extends v.ObjectEntries>(type: T, entries: E) => {
  const fields = { type: v.literal(type), ...entries };
  return v.object(fields, (issue) => {
    const key = issue.path?.[0]?.key;
    const field = typeof key === 'string' && Object.hasOwn(fields, key) ? (fields as v.ObjectEntries)[key] : undefined;
    const judged = field && v.safeParse(field, undefined);
    return judged && !judged.success ? judged.issues[0].message : issue.message;
  });
};

/** Every request type with its fields; the value of each reply is in messages.ts (`Replies`). */
export const REQUESTS = {
  /** Asks the aria2 endpoint given (not yet saved) for its version. */
  'aria2-test': request('aria2-test', { url: v.string(), secret: v.string(), plainConfirmed: v.boolean() }),
  /** Hands a Stitch download to aria2 (its URL, mirrors, name, digest): it leaves Stitch's list for aria2's rows. */
  'aria2-send': request('aria2-send', { id: ID }),
  /** Acts on a download in aria2; `run-here` takes it back into Stitch. */
  'aria2-action': request('aria2-action', { gid: present('gid'), action: ARIA2_ACTION }),
  /** Every job, newest first. */
  'list-jobs': request('list-jobs', {}),
  /** One action on one job. Resume also starts a queued job now if a slot is free. */
  'job-action': request('job-action', { action: JOB_ACTION, id: ID }),
  /**
   * One action on every job it applies to (cancel all: every unfinished job), or only on those of
   * `ids` (the rows a filter shows; for `undo`, the jobs one Cancel all cancelled).
   */
  'all-action': request('all-action', {
    action: JOB_ACTION,
    ids: v.optional(v.pipe(v.array(ID, 'ids: a list of ids'), v.maxLength(100_000, 'ids: at most 100,000'))),
  }),
  /** Forgets saved and cancelled jobs, and failed ones with no stored bytes worth a retry. */
  'clear-finished': request('clear-finished', {}),
  /** Forgets page-wide notices. */
  'dismiss-notices': request('dismiss-notices', {}),
  /** Starts a download by hand; filename overrides the server's name (blank: the server's); saveAs asks where. */
  'add-url': request('add-url', {
    url: HTTP_URL,
    filename: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.transform((name) => name || undefined),
      ),
    ),
    referrer: v.optional(v.string()),
    saveAs: v.optional(v.boolean()),
  }),
  /** Opens the saved file with the system (downloads.open). */
  'open-file': request('open-file', { id: ID }),
  /** Shows the saved file in its folder (downloads.show). */
  'show-in-folder': request('show-in-folder', { id: ID }),
  /** Where the saved file is (downloads.search's `filename`), to drag it out of the list; no `path` when it is gone from disk. */
  'saved-path': request('saved-path', { id: ID }),
  /** Saves again, asking where (downloads.download with saveAs), a complete job whose save failed. */
  'save-as': request('save-as', { id: ID }),
  'get-settings': request('get-settings', {}),
  /** Validates and stores (the settings schema checks them); on problems replies ok:false with `errors` and stores nothing. */
  'set-settings': request('set-settings', { settings: v.unknown() }),
  /** Parses JSON text, validates and stores, like set-settings. */
  'import-settings': request('import-settings', { json: present('json') }),
  /** Asks each mirror of the rule for the sample URL and compares sizes with the original. */
  'test-mirror-rule': request('test-mirror-rule', { rule: MIRROR_RULE, sampleUrl: HTTP_URL }),
  /**
   * The job a player plays: `id`, or else the newest job downloading `url` whose bytes are still
   * stored, or else a new download of `url` (`started: true`). A queued one starts at once: a
   * player waits for it. One of `id` and `url` is needed (checked by `REQUEST`).
   */
  play: request('play', { id: v.optional(ID), url: v.optional(HTTP_URL), referrer: v.optional(v.string()) }),
  /**
   * Leaving downloads to the browser: `next` arms (or disarms) it for the next download Stitch
   * would take; `site` adds a host to the excluded sites. Without fields: only the current state.
   */
  bypass: request('bypass', { next: v.optional(v.boolean()), site: v.optional(SITE) }),
  /**
   * A new URL for a paused or failed job (an expired link): it continues with the stored bytes
   * when the new address serves the same file; otherwise nothing changes and `mismatchFacts` says why
   * (`mismatch`, in the engine's English words, for logs); then `startOver: true` drops the stored
   * bytes and downloads from the new address.
   */
  relink: request('relink', { id: ID, url: HTTP_URL, startOver: v.optional(v.boolean()) }),
  /** Moves a queued job one place earlier (`up`: it starts sooner) or later in the queue. */
  'queue-move': request('queue-move', {
    id: ID,
    direction: v.picklist(['up', 'down'], (issue) => `unknown direction ${String(issue.input)}`),
  }),
  /** Sets one download's own speed limit in bytes/s; null lifts it. */
  'job-speed-limit': request('job-speed-limit', {
    id: ID,
    bytesPerSecond: v.nullable(v.pipe(v.number(SPEED_LIMIT_WORDS), v.finite(SPEED_LIMIT_WORDS), v.gtValue(0, SPEED_LIMIT_WORDS))),
  }),
  /** Gives a job back to the browser: the browser downloads the URL itself; the job and its bytes go. */
  'hand-to-browser': request('hand-to-browser', { id: ID }),
  /**
   * Takes over a download left with the browser, which Stitch watches, by the browser's downloads id
   * (a `watched` row's `downloadId`): the way a rescue takes it. `taken: false`: the server would not
   * serve Stitch the same file, and the browser keeps it, watched. Refused when it is watched no more.
   */
  'take-over-watched': request('take-over-watched', {
    downloadId: v.pipe(v.number('missing downloadId'), v.integer('missing downloadId'), v.minValue(0, 'missing downloadId')),
  }),
  /**
   * Downloads a video stream a tab loaded (a `streams` row's `url`) as one file: the row's variant
   * `variant` (an index into its `variants`), else the best.
   */
  'download-stream': request('download-stream', {
    url: HTTP_URL,
    variant: v.optional(v.pipe(v.number('unknown variant'), v.integer('unknown variant'), v.minValue(0, 'unknown variant'))),
  }),
  /** Starts recording a found live stream (its playlist's URL); `stop-recording` saves what was recorded. */
  'record-stream': request('record-stream', { url: HTTP_URL }),
  'stop-recording': request('stop-recording', { url: HTTP_URL }),
} satisfies {
  [T in keyof Replies]: v.ObjectSchema<{ type: v.LiteralSchema<T, undefined> } & v.ObjectEntries, v.ErrorMessage<v.ObjectIssue>>;
};

/** Any request a page may send; anything else is an `unknown request`. */
export const REQUEST = v.pipe(
  v.variant('type', Object.values(REQUESTS), 'unknown request'),
  v.check(
    (r) => r.type !== 'play' || r.id !== undefined || r.url !== undefined,
    () => t('errorNotUrl', ''),
  ),
);

/** A request as the handler receives it: checked, its fields in normal form. */
export type ParsedRequest = v.InferOutput<typeof REQUEST>;

/** What a player page posts on the player port; anything else is ignored. */
export const PLAYER_PAGE_MESSAGE = v.variant('type', [
  v.object({ type: v.literal('attach'), id: ID }),
  /** `position`: the byte the player needs next (omitted: unchanged); `durationSeconds` sizes the window. */
  v.object({
    type: v.literal('position'),
    position: v.optional(v.pipe(v.number(), v.finite(), v.minValue(0))),
    durationSeconds: v.optional(v.pipe(v.number(), v.finite(), v.gtValue(0))),
  }),
]);
