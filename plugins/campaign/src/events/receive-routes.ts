import { AppError, PluginApi, PluginContext, readRawBody } from '@switchboard/core';
import { CAMPAIGN_API_PREFIX } from '../shared/paths';
import { envelopes, okSchema } from '../shared/envelope';
import { ProviderAdapters } from './provider-adapters';
import { providerRequestReceiver } from './provider-request';

const receiptSchema = {
  type: 'object',
  required: ['received', 'recorded'],
  properties: {
    received: { type: 'integer', description: 'Events in the request' },
    recorded: { type: 'integer', description: 'Events new to us (a retried event is recorded once)' },
    confirmed: { type: 'boolean', description: 'A subscription confirmation was visited (provider_d)' },
  },
} as const;

/**
 * Where providers post their events: no API token, the endpoint's secret is the proof. Each request is
 * received by provider-request.ts (verified on its raw bytes, its events normalized by the provider's
 * adapter, then recorded and applied by event-recorder.ts); an endpoint named by id that was refused or
 * changed since this process read it is read again once. A refusal writes nothing.
 */
export function receiveRoutes(api: PluginApi, ctx: PluginContext): void {
  const adapters = ctx.container.resolve(ProviderAdapters);
  const receiveRequest = providerRequestReceiver(ctx);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  // Its own group under /webhook (the longest prefix wins): a verified request is never refused for rate,
  // however many a provider sends from its few addresses; only refused ones count (bad signatures, ...).
  api
    .group({ prefix: `${CAMPAIGN_API_PREFIX}/webhook`, tag: 'campaign', auth: 'none', rateLimitCounts: 'refusals' })
    .post(
      '/:provider',
      {
        summary: "Receive a provider's events (verified with the endpoint's secret)",
        description:
          "The body is the provider's own (JSON, a form or multipart), read as sent and verified before it is parsed.",
        answers: {
          400: 'BAD_REQUEST: the verified body cannot be read in the provider format',
          401: 'SIGNATURE_INVALID: the signature does not hold (or the endpoint has no secret)',
          403: 'INACTIVE: the endpoint is switched off',
          404: 'RESOURCE_NOT_FOUND: no such provider, or no such (single active) endpoint of it',
          413: 'PAYLOAD_TOO_LARGE: the body is larger than the configured limit',
          503: 'SERVICE_UNAVAILABLE: a certificate or confirmation the provider names could not be read (SNS), the adapter did not verify or read the request within 10 s, or the endpoint changed while the request was received; the provider tries again',
        },
        params: {
          type: 'object',
          required: ['provider'],
          properties: { provider: { type: 'string', maxLength: 64 } },
        },
        query: {
          type: 'object',
          properties: { endpoint: { type: 'integer', minimum: 1, maximum: 4294967295 } },
        },
        // Any fields (a generated client typed a form body Record<string, never>), and SNS's text/plain.
        rawBody: {
          'application/json': { schema: {} },
          'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: true } },
          'multipart/form-data': { schema: { type: 'object', additionalProperties: true } },
          'text/plain': { schema: { type: 'string' } },
        },
        response: { schema: okSchema(receiptSchema) },
      },
      async ({ params, query, ctx: http }) => {
        const adapter = adapters.get(params.provider);
        if (!adapter) throw new AppError('RESOURCE_NOT_FOUND', `Unknown provider ${params.provider}`);
        let body: Promise<Buffer> | undefined;
        const receive = (fresh: boolean) =>
          receiveRequest({
            adapter,
            provider: params.provider,
            endpointId: query.endpoint,
            http,
            body: () => (body ??= readRawBody(http)),
            fresh,
          });
        // An endpoint named by id comes as last read: refused or changed since, it is read again.
        const receipt =
          (await receive(false).catch((err: unknown) => {
            if (query.endpoint !== undefined && err instanceof AppError && [401, 403].includes(err.status)) return null;
            throw err;
          })) ?? (await receive(true));
        if (!receipt)
          throw new AppError(
            'SERVICE_UNAVAILABLE',
            `The ${params.provider} endpoint changed while the request was received`,
          );
        return envelope.ok(receipt);
      },
    );
}
