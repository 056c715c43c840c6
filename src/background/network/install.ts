import type { BrowserApi } from '../browser-api';
import { LocalNetworkRules } from './local-network-rules';
import { PostTracker } from './post-tracker';
import { redirectLog } from './redirect-log';
import { ReferrerRules } from './referrer-rules';
import { SessionRules } from './session-rules';

export interface NetworkRules {
  /** Synced at every start of the worker: the rules of jobs gone are removed. */
  sessionRules: SessionRules;
  referrers: ReferrerRules;
  localNetwork: LocalNetworkRules;
  posts: PostTracker;
}

/**
 * What the browser does to requests, and what it tells of them: the session rules (the page's
 * Referer on Stitch's requests, Stitch's requests stopped at local addresses), the pages' non-GET
 * requests, and the redirect hops fetch hides. Registers its webRequest listeners synchronously.
 */
export function installNetworkRules(api: BrowserApi): NetworkRules {
  // One set of session rules for both concepts: each sync makes the browser's rules their union.
  const sessionRules = new SessionRules(api);
  const referrers = new ReferrerRules(api, sessionRules);
  const localNetwork = new LocalNetworkRules(api, sessionRules);
  const posts = new PostTracker();
  api.webRequest?.onBeforeRequest.addListener((details) => posts.observe(details));
  // The redirects fetch hides from the engine: their hops are checked before they are sent.
  redirectLog.watch(api.webRequest?.onRedirect, {
    mayReach: (url) => localNetwork.allows(url),
    letThrough: (url, task) => localNetwork.during(url, [], task),
  });
  return { sessionRules, referrers, localNetwork, posts };
}
