import type { PluginApi, PluginContext } from '@switchboard/core';
import { ConfirmationMails } from './confirmation-mails';
import { envelopes, messageSchema } from '../../shared/envelope';
import { CONFIRM_PATH } from '../../shared/paths';

/** The double opt-in link a subscriber opens: no API token, the signed token is the proof. */
export function confirmRoutes(api: PluginApi, ctx: PluginContext): void {
  const confirmations = ctx.container.resolve(ConfirmationMails);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  api.group({ prefix: CONFIRM_PATH, tag: 'campaign', auth: 'none' }).get(
    '/',
    {
      summary: 'Confirm a subscription (the link of the double opt-in mail)',
      query: {
        type: 'object',
        required: ['token'],
        additionalProperties: false,
        properties: { token: { type: 'string', minLength: 3, maxLength: 200 } },
      },
      response: { schema: messageSchema },
      answers: {
        404: 'RESOURCE_NOT_FOUND: the subscription no longer exists',
        422: 'VALIDATION_ERROR: the link is not valid (rule signature)',
      },
    },
    async ({ query }) => {
      await confirmations.confirm(query.token);
      return envelope.message('Subscription confirmed');
    },
  );
}
