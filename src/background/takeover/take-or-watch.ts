/**
 * Decide at the start (issue 27): whether Stitch takes a browser download over at once, or leaves it
 * with the browser and watches it (watch-rescue.ts). A healthy download on a fast line gains nothing
 * from Stitch and pays a second pass, so Stitch takes it only when that is surely faster or safer.
 * Downloads the user gives Stitch directly (context menu, Play) never come here: they are Stitch's already.
 */

/** What is known of a download once the browser started it and Stitch asked for its first byte again. */
export interface StartFacts {
  /** Mirrors from the user's mirror rules, or advertised by the server (`Link: rel=duplicate`, a Metalink). */
  mirrorsKnown: boolean;
  /** The server announced the file's digest: Stitch checks it, the browser does not. */
  digestAnnounced: boolean;
  /** The user asked for every download to be taken over (_Always take over_). */
  alwaysTakeOver: boolean;
  /** This host was measured giving each connection a capped rate: several connections are faster. */
  hostCapsConnections: boolean;
  /** An aria2 rule of the user's (its size or sites) sends this download to aria2: the user asked. */
  aria2RuleMatches: boolean;
}

export type StartDecision = 'take' | 'watch';

export function decideAtStart(facts: StartFacts): StartDecision {
  const takeAtOnce =
    facts.mirrorsKnown || facts.digestAnnounced || facts.alwaysTakeOver || facts.hostCapsConnections || facts.aria2RuleMatches;
  return takeAtOnce ? 'take' : 'watch';
}
