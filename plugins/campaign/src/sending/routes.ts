import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { confirmationSchema, envelopes } from '../shared/envelope';
import { SendService } from './send-service';
import { sendBody, sendSchema, testSendBody } from './schemas';

export function sendingRoutes(group: ApiGroup, ctx: PluginContext): void {
  const sends = ctx.container.resolve(SendService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  group
    .post(
      '/messages/:id/send',
      {
        summary: 'Send a message to lists, now or at scheduled_at (test_mode: render and record, deliver nothing)',
        permission: 'messages:write',
        answers: {
          422: 'VALIDATION_ERROR, also: scheduled_at not in the future (rule future) or past 9999 (maximum); a message not sendable in its status, a send of it pending or active or it sent (status/sendable); a list id not of the organization (exists); no from_email on the message nor a default sender profile (from_email/required)',
        },
        params: idParams,
        body: sendBody,
        response: { schema: confirmationSchema(sendSchema) },
      },
      async ({ auth, params, body }) => {
        const send = await sends.send(auth.organizationId, params.id, body);
        const what =
          send.status === 'pending'
            ? `scheduled for ${send.scheduled_at} to ${send.recipients} recipients`
            : `${send.test_mode ? 'test run started' : 'sending started'} to ${send.recipients} recipients`;
        return envelope.confirmation(`Message ${params.id} ${what}`, send);
      },
    )
    .post(
      '/messages/:id/test',
      {
        summary: 'Send one test mail of a message to an address now (subject marked as a test; no counter changes)',
        permission: 'messages:write',
        params: idParams,
        body: testSendBody,
        response: {
          schema: confirmationSchema({
            type: 'object',
            required: ['email', 'message_id_header'],
            properties: {
              email: { type: 'string' },
              message_id_header: { type: 'string', description: 'the Message-ID header of the mail sent' },
            },
          }),
        },
      },
      async ({ auth, params, body }) => {
        const sent = await sends.test(auth.organizationId, params.id, body.email);
        return envelope.confirmation(`Test mail of message ${params.id} sent to ${sent.email}`, sent);
      },
    )
    .post(
      '/messages/:id/resume',
      {
        summary: 'Resume a send paused because too many of its recipients failed',
        permission: 'messages:write',
        answers: { 422: 'VALIDATION_ERROR, also when the message has no paused send (status/paused_only)' },
        params: idParams,
        response: { schema: confirmationSchema({ type: 'object', properties: { status: { const: 'active' } } }) },
      },
      async ({ auth, params }) => {
        await sends.resume(auth.organizationId, params.id);
        return envelope.confirmation(`Message ${params.id} resumed`, { status: 'active' as const });
      },
    )
    .post(
      '/messages/:id/cancel',
      {
        summary: 'Cancel a pending or active send (mails not handed to SMTP yet are not sent)',
        permission: 'messages:write',
        answers: { 422: 'VALIDATION_ERROR, also when the message has no pending or active send (status/not_sending)' },
        params: idParams,
        response: { schema: confirmationSchema({ type: 'object', properties: { status: { const: 'cancelled' } } }) },
      },
      async ({ auth, params }) => {
        await sends.cancel(auth.organizationId, params.id);
        return envelope.confirmation(`Message ${params.id} cancelled`, { status: 'cancelled' as const });
      },
    );
}
