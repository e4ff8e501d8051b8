import type { Context } from 'koa';
import { AppError, Clock, Locks, PluginContext, SERVICES, withinDeadline } from '@switchboard/core';
import { checkedEvents, InboundRequest, isProviderError, malformed, ProviderAdapter } from '@switchboard/provider-kit';
import { InboundWebhooksService, ReceivingEndpoint } from './inbound-webhooks/service';
import { ProviderAdapters } from './provider-adapters';
import { InboundEventRecorder } from './event-recorder';
import { requestReplayGuard, RequestReplayGuard } from './replay-guard';
import { REMOTE_TEXT, RemoteText } from './remote-text';

/**
 * How long an adapter may take to verify a request or read its events (ms; a container value, so that tests
 * can shorten it). A third party's adapter whose promise never settles held the request, its body and its
 * one-time tokens for good; past this the provider is answered 503 and tries again. provider_d's longest
 * step, a certificate read, gives up after 5 s.
 */
export const ADAPTER_DEADLINE_MS = 'campaign.AdapterDeadlineMs';
export const DEFAULT_ADAPTER_DEADLINE_MS = 10_000;

/** What a provider is answered. */
export interface ProviderReceipt {
  received: number;
  recorded: number;
  confirmed?: boolean;
}

/** One try at a provider's request with the endpoint as last read (`fresh`: as it is now). */
export interface ProviderRequest {
  adapter: ProviderAdapter;
  provider: string;
  endpointId: number | undefined;
  http: Context;
  /** The raw body, read once for all tries. */
  body: () => Promise<Buffer>;
  fresh: boolean;
}

/**
 * Receives a provider's request (receive-routes.ts): the endpoint found and checked, the request verified
 * on its raw bytes, a subscription confirmation visited or the events recorded and applied. Its answer is
 * the receipt, or null when the endpoint changed since it was read (the route tries again with it fresh).
 * A refusal writes nothing.
 */
export function providerRequestReceiver(ctx: PluginContext) {
  const endpoints = ctx.container.resolve(InboundWebhooksService);
  const recorder = ctx.container.resolve(InboundEventRecorder);
  const clock = ctx.container.resolve<Clock>(SERVICES.Clock);
  const locks = ctx.container.resolve<Locks>(SERVICES.Locks);
  // Resolved per request, so that tests can stand in for the network.
  const fetchText = (url: string) => ctx.container.resolve<RemoteText>(REMOTE_TEXT)(url);
  const adapters = ctx.container.resolve(ProviderAdapters);

  /** An adapter's step, given until the deadline; a late one is logged once a minute per adapter. */
  async function adapterStep<T>(
    { provider }: ProviderRequest,
    step: 'verify' | 'normalize',
    work: () => T | Promise<T>,
  ): Promise<T> {
    return readingHostileInput(() => {
      const settling = work();
      // A thenable of another promise library counts too.
      if (typeof (settling as { then?: unknown } | null)?.then !== 'function') return settling;
      const ms = ctx.container.resolve<number>(ADAPTER_DEADLINE_MS);
      return withinDeadline(Promise.resolve(settling), ms, () => {
        adapters.warn(provider, step, `${step} did not settle within ${ms} ms`);
        return new AppError(
          'SERVICE_UNAVAILABLE',
          `The ${provider} adapter did not ${step === 'verify' ? 'verify' : 'read'} the request in time: send it again`,
        );
      });
    });
  }

  async function endpointOf({ provider, endpointId, fresh }: ProviderRequest): Promise<ReceivingEndpoint> {
    const endpoint = await endpoints.receiving(provider, endpointId, { fresh });
    if (!endpoint)
      throw new AppError(
        'RESOURCE_NOT_FOUND',
        endpointId !== undefined
          ? `No ${provider} endpoint ${endpointId}`
          : `No single active ${provider} endpoint: give ?endpoint=<id>`,
      );
    if (!endpoint.isActive) throw new AppError('INACTIVE', `Inbound webhook endpoint ${endpoint.id} is inactive`);
    if (endpoint.secret === null) throw new AppError('SIGNATURE_INVALID', `Endpoint ${endpoint.id} has no secret`);
    return endpoint;
  }

  /** The verified request's receipt; null when the endpoint changed meanwhile. */
  async function verifiedReceipt(
    call: ProviderRequest,
    endpoint: ReceivingEndpoint,
    request: InboundRequest,
    replay: RequestReplayGuard,
  ): Promise<ProviderReceipt | null> {
    const { adapter, provider } = call;
    await adapterStep(call, 'verify', () =>
      adapter.verify(
        request,
        { secret: endpoint.secret!, options: { ...endpoint.options } },
        { now: () => clock.now(), replay, fetchText },
      ),
    );
    const confirmation = adapter.subscriptionUrl?.(request);
    if (confirmation) {
      if (!(await endpoints.unchanged([endpoint]))(endpoint)) return null;
      await fetchText(confirmation);
      return { received: 0, recorded: 0, confirmed: true };
    }
    const receipt = await recorder.record(
      endpoint,
      provider,
      checkedEvents(provider, await adapterStep(call, 'normalize', () => adapter.normalize(request))),
    );
    return 'stale' in receipt ? null : receipt;
  }

  return async function receive(call: ProviderRequest): Promise<ProviderReceipt | null> {
    const endpoint = await endpointOf(call);
    const { http } = call;
    const request: InboundRequest = {
      rawBody: await call.body(),
      headers: http.headers,
      query: http.query as Record<string, string | undefined>,
    };
    // A one-time token is spent with the request's events, and given back when anything fails.
    const replay = requestReplayGuard(locks, endpoint.id);
    try {
      const receipt = await verifiedReceipt(call, endpoint, request, replay);
      if (!receipt) {
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
}

/**
 * An adapter reads what anyone may post: an exception it did not mean (a TypeError on an object where it
 * expected text, say) is the body's fault, a 400, not a 500 (500s give their rate-limit point back, so a
 * sender could repeat them for free). A fetch of a certificate that failed stays what it was.
 */
async function readingHostileInput<T>(read: () => T | Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (isProviderError(err) || !(err instanceof TypeError || err instanceof RangeError)) throw err;
    throw malformed(`The body cannot be read: ${err.message}`);
  }
}
