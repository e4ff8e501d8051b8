/** The campaign spec's envelopes: success with meta, message-only, and paginated (core's linked envelopes). */
export {
  linkedEnvelopes as envelopes,
  okEnvelopeSchema as okSchema,
  confirmationEnvelopeSchema as confirmationSchema,
  messageEnvelopeSchema as messageSchema,
  pageEnvelopeSchema as pageSchema,
} from '@switchboard/core';
