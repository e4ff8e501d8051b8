import { AppError, Clock, Locks, PluginApi, PluginContext, readRawBody, SERVICES } from '@switchboard/core';
import { InboundRequest, isProviderError } from '@switchboard/provider-kit';
import { CAMPAIGN_API_PREFIX } from '../shared/paths';
import { envelopes, okSchema } from '../shared/envelope';
import { InboundWebhooksService } from './inbound-webhooks/service';
import { InboundEventRecorder } from './event-recorder';
import { ProviderAdapters } from './provider-adapters';
import { requestReplayGuard } from './replay-guard';
import { REMOTE_TEXT, RemoteText } from './remote-text';

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
 * Where providers post their events: no API token, the endpoint's secret is the proof. The request is
 * verified on its raw bytes, its events normalized by the provider's adapter, then recorded and applied
 * (event-recorder.ts). A refusal writes nothing.
 */
export function receiveRoutes(api: PluginApi, ctx: PluginContext): void {
  const adapters = ctx.container.resolve(ProviderAdapters);
  const endpoints = ctx.container.resolve(InboundWebhooksService);
  const recorder = ctx.container.resolve(InboundEventRecorder);
  const clock = ctx.container.resolve<Clock>(SERVICES.Clock);
  const locks = ctx.container.resolve<Locks>(SERVICES.Locks);
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
          503: 'SERVICE_UNAVAILABLE: a certificate or confirmation the provider names could not be read (SNS), or the endpoint changed while the request was received; the provider tries again',
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
        response: { schema: okSchema(receiptSchema) },
      },
      async ({ params, query, ctx: http }) => {
        const adapter = adapters.get(params.provider);
        if (!adapter) throw new AppError('RESOURCE_NOT_FOUND', `Unknown provider ${params.provider}`);
        let body: Promise<Buffer> | undefined;
        /** The request received with the endpoint as last read (`fresh`: as it is now); null when that changed since. */
        const receive = async (fresh: boolean) => {
          const endpoint = await endpoints.receiving(params.provider, query.endpoint, { fresh });
          if (!endpoint)
            throw new AppError(
              'RESOURCE_NOT_FOUND',
              query.endpoint !== undefined
                ? `No ${params.provider} endpoint ${query.endpoint}`
                : `No single active ${params.provider} endpoint: give ?endpoint=<id>`,
            );
          if (!endpoint.isActive) throw new AppError('INACTIVE', `Inbound webhook endpoint ${endpoint.id} is inactive`);
          if (endpoint.secret === null)
            throw new AppError('SIGNATURE_INVALID', `Endpoint ${endpoint.id} has no secret`);
          const request: InboundRequest = {
            rawBody: await (body ??= readRawBody(http)),
            headers: http.headers,
            query: http.query as Record<string, string | undefined>,
          };
          // A one-time token is spent with the request's events, and given back when anything fails.
          const replay = requestReplayGuard(locks, endpoint.id);
          try {
            // Resolved per request, so that tests can stand in for the network.
            const fetchText = (url: string) => ctx.container.resolve<RemoteText>(REMOTE_TEXT)(url);
            await adapter.verify(
              request,
              { secret: endpoint.secret, options: { ...endpoint.options } },
              { now: () => clock.now(), replay, fetchText },
            );
            const confirmation = adapter.subscriptionUrl?.(request);
            if (confirmation && !(await endpoints.unchanged([endpoint]))(endpoint)) {
              await replay.release();
              return null;
            }
            if (confirmation) await fetchText(confirmation);
            const receipt = confirmation
              ? { received: 0, recorded: 0, confirmed: true }
              : await recorder.record(endpoint, params.provider, await adapter.normalize(request));
            if ('stale' in receipt) {
              await replay.release();
              return null;
            }
            // The events are committed: the answer does not wait for the spend. The token stays held
            // meanwhile, so a replay is refused all the same; a spend that fails leaves the hold to lapse.
            replay.spend().catch((err: unknown) => http.state.log.warn({ err }, 'webhook token not spent'));
            return receipt;
          } catch (err) {
            await replay.release();
            if (!isProviderError(err)) throw err;
            if (err.kind === 'malformed') throw new AppError('BAD_REQUEST', err.message);
            throw new AppError('SIGNATURE_INVALID', err.message);
          }
        };
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
