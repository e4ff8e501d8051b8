/** Where every campaign route is mounted. */
export const CAMPAIGN_API_PREFIX = '/api/campaign';

/** The double opt-in link sent in mail; it needs no API token, its signed token is the proof. */
export const CONFIRM_PATH = `${CAMPAIGN_API_PREFIX}/confirm`;

/** The one-click unsubscribe link every campaign mail carries (GET shows a page, POST unsubscribes). */
export const UNSUBSCRIBE_PATH = `${CAMPAIGN_API_PREFIX}/unsubscribe`;

/** Open pixel and click redirect of tracked mail (no API token: the signed token is the proof). */
export const TRACK_PATH = `${CAMPAIGN_API_PREFIX}/t`;

/** The unsubscribe link of changelog notice mails (GET shows a page, POST unsubscribes). */
export const CHANGELOG_UNSUBSCRIBE_PATH = `${CAMPAIGN_API_PREFIX}/changelog/unsubscribe`;
export const CHANGELOG_CONFIRM_PATH = `${CAMPAIGN_API_PREFIX}/changelog/confirm`;
