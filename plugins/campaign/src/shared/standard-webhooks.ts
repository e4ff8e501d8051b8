/** The Standard Webhooks scheme lives in the provider kit: outbound deliveries and inbound adapters sign alike. */
export { keyOfSecret, standardWebhookHeaders, whsecOf } from '@switchboard/provider-kit';

/** The fewest key bytes a secret may give: `whsec_` and text that decodes to nothing signed with an empty key. */
export const MIN_KEY_BYTES = 16;
