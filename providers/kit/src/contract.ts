import { expect } from 'chai';
import { isProviderError, ProviderError } from './errors';
import { memoryReplayGuard } from './replay';
import { eventProblem } from './event-shape';
import { EVENT_TYPES, HOST_HEADERS } from './types';
import type { InboundEndpoint, InboundRequest, NormalizedEvent, ProviderAdapter, VerifyContext } from './types';

/** A fixture request and the events it must normalize to (the fields given are compared). */
export interface ContractFixture {
  name: string;
  request: InboundRequest;
  events: Array<Partial<Omit<NormalizedEvent, 'occurredAt' | 'raw'>> & { occurredAt?: string }>;
  /**
   * The sample gives different events one id, or an id another fixture's event has: documentation samples
   * with a placeholder id do, and so does the same event told twice on purpose (a retry, another form).
   */
  idsRepeat?: boolean;
}

export interface AdapterContract {
  adapter: ProviderAdapter;
  endpoint: InboundEndpoint;
  /** The request the provider sends for `body`, signed with the endpoint's secret at `at`. */
  sign(body: Buffer, endpoint: InboundEndpoint, at: Date): InboundRequest;
  /** A body of the provider's shape holding at least one event. */
  body: Buffer;
  /** The headers (or query fields) the scheme needs: without any one of them, nothing verifies. */
  removeEach: Array<(request: InboundRequest) => InboundRequest>;
  /** False for schemes that authenticate the sender only (HTTP Basic): a changed body still verifies. */
  signsBody: boolean;
  /** Seconds after which a signed request is stale, for schemes with a signed timestamp. */
  maxAgeSeconds?: number;
  /** Seconds ahead of now a signed timestamp may be (clock skew); maxAgeSeconds when not given. */
  maxAheadSeconds?: number;
  /** True for schemes with a one-time token: the same request twice is refused the second time. */
  refusesReplay: boolean;
  /**
   * False where the provider signs with a key of its own, not the endpoint's secret (SNS): the adapter's
   * own tests then show that another signer is refused.
   */
  signsWithSecret?: boolean;
  fixtures: ContractFixture[];
  /** An event as the provider sends it back for mail that carried `headers` (normalized, not verified). */
  echo(headers: Record<string, string>): InboundRequest;
  /** What verification may need besides a clock and a replay guard (a certificate source). */
  context?: Partial<VerifyContext>;
}

const NOW = new Date('2026-03-01T12:00:00Z');

/** Bodies no provider sends: each must give a ProviderError, or no event, never another exception. */
const GARBAGE = ['', 'not json', '{"unterminated": ', 'null', '42', '[1, 2]', '{}', '[{}]', '\u0000\u00ff\u00fe'];

/** Names every plain object answers to: a provider's event name looked up in a table must not find them. */
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];

/**
 * Another secret of the same shape: one character in the middle moved to the next of its kind, a hex
 * digit within 0-9a-f (or A-F), another letter or digit within its own, so a secret read as hex or base64
 * still decodes, to other bytes.
 */
export function otherSecret(secret: string): string {
  const start = secret.startsWith('whsec_') ? 6 : 0;
  for (let i = start + Math.floor((secret.length - start) / 2); i < secret.length; i++) {
    const next = nextOfItsKind(secret[i]);
    if (next) return secret.slice(0, i) + next + secret.slice(i + 1);
  }
  return `${secret}-other`;
}

const KINDS = ['0123456789abcdef', '0123456789ABCDEF', 'ghijklmnopqrstuvwxyz', 'GHIJKLMNOPQRSTUVWXYZ'];

function nextOfItsKind(c: string): string | null {
  const kind = KINDS.find((k) => k.includes(c));
  return kind ? kind[(kind.indexOf(c) + 1) % kind.length] : null;
}

/** The body with every text in it (JSON values, form values) replaced by `name`, keys kept. */
function everyTextAs(body: Buffer, name: string): Buffer {
  const text = body.toString('utf8');
  const replaced = (value: unknown): unknown =>
    typeof value === 'string'
      ? name
      : Array.isArray(value)
        ? value.map(replaced)
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaced(v)]))
          : value;
  try {
    return Buffer.from(JSON.stringify(replaced(JSON.parse(text))));
  } catch {
    const form = new URLSearchParams(text);
    for (const key of new Set(form.keys())) form.set(key, name);
    return Buffer.from(form.toString());
  }
}

/**
 * The suite every adapter's own test file runs with its fixtures (as Auth.js runs its providers through
 * one set of basic tests): signatures, staleness, replay, every fixture's events, garbage, and our ids
 * coming back through the adapter's outgoing headers.
 */
export function runAdapterContract(contract: AdapterContract): void {
  const { adapter, endpoint } = contract;
  const context = (): VerifyContext => ({ now: () => NOW, replay: memoryReplayGuard(), ...contract.context });
  const refused = async (request: InboundRequest, kinds: string[], what: string, ctx = context()) => {
    const error = await adapter.verify(request, endpoint, ctx).then(
      () => null,
      (err: unknown) => err,
    );
    expect(isProviderError(error), `verify must refuse ${what} with a ProviderError, not ${String(error)}`).to.equal(
      true,
    );
    expect(kinds, `the kind of refusal of ${what}`).to.include((error as ProviderError).kind);
  };

  describe(`provider adapter contract: ${adapter.key}`, () => {
    it('verifies a correctly signed request', async () => {
      await adapter.verify(contract.sign(contract.body, endpoint, NOW), endpoint, context());
    });

    if (contract.signsWithSecret !== false)
      it('refuses a request signed with another secret', async () => {
        const other = { ...endpoint, secret: otherSecret(endpoint.secret ?? '') };
        await refused(
          contract.sign(contract.body, other, NOW),
          ['signature', 'forbidden'],
          `a request signed with the secret ${JSON.stringify(other.secret)}`,
        );
      });

    if (contract.signsBody)
      it('refuses a tampered body', async () => {
        const request = contract.sign(contract.body, endpoint, NOW);
        const tampered = Buffer.from(request.rawBody);
        tampered[Math.floor(tampered.length / 2)] ^= 1;
        await refused({ ...request, rawBody: tampered }, ['signature', 'malformed'], 'a body changed after signing');
      });

    it('refuses a request missing any part of its signature', async () => {
      for (const [k, remove] of contract.removeEach.entries())
        await refused(
          remove(contract.sign(contract.body, endpoint, NOW)),
          ['signature', 'forbidden', 'malformed'],
          `a request without part ${k + 1} of removeEach`,
        );
    });

    if (contract.maxAgeSeconds !== undefined) {
      const maxAge = contract.maxAgeSeconds;
      const maxAhead = contract.maxAheadSeconds ?? maxAge;
      it(`refuses a timestamp older than ${maxAge} s or ${maxAhead} s ahead, accepts one just inside`, async () => {
        const at = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);
        await refused(
          contract.sign(contract.body, endpoint, at(maxAge + 1)),
          ['stale'],
          `a request signed ${maxAge + 1} s ago`,
        );
        await refused(
          contract.sign(contract.body, endpoint, at(-(maxAhead + 1))),
          ['stale'],
          `a request signed ${maxAhead + 1} s ahead`,
        );
        await adapter.verify(contract.sign(contract.body, endpoint, at(maxAge - 1)), endpoint, context());
        await adapter.verify(contract.sign(contract.body, endpoint, at(-(maxAhead - 1))), endpoint, context());
      });
    }

    if (contract.refusesReplay)
      it('refuses the same token a second time', async () => {
        const ctx = context();
        const request = contract.sign(contract.body, endpoint, NOW);
        await adapter.verify(request, endpoint, ctx);
        await refused(request, ['replayed'], 'the same request a second time', ctx);
      });

    if (contract.refusesReplay)
      it('leaves tokens to the given guard: one that forgot the token accepts it again', async () => {
        // The host gives a token back when recording fails, so that the provider's retry is accepted.
        const request = contract.sign(contract.body, endpoint, NOW);
        await adapter.verify(request, endpoint, context());
        await adapter.verify(request, endpoint, context());
      });

    for (const fixture of contract.fixtures)
      it(`normalizes ${fixture.name}`, async () => {
        const events = await adapter.normalize(fixture.request);
        expect(events).to.have.length(fixture.events.length);
        events.forEach((event, i) => {
          const { occurredAt, ...fields } = fixture.events[i];
          expect(event, `event ${i}`).to.deep.include(fields);
          if (occurredAt) expect(event.occurredAt.toISOString(), `event ${i} time`).to.equal(occurredAt);
          expect(event.providerEventId, `event ${i} id`).to.be.a('string').and.not.empty;
          expect(event.raw, `event ${i} raw`).to.not.equal(undefined);
          expect(eventProblem(event), `event ${i}: what the host refuses`).to.equal(null);
        });
      });

    it('gives every event its own provider event id, across requests too', async () => {
      // The host records an event once per id: an id two events share loses the second, silently.
      const seen = new Map<string, string>();
      for (const fixture of contract.fixtures.filter((f) => !f.idsRepeat)) {
        const ids = (await adapter.normalize(fixture.request)).map((e) => e.providerEventId);
        expect(new Set(ids).size, `the events of ${fixture.name}`).to.equal(ids.length);
        for (const id of ids) {
          expect(seen.get(id), `id ${id} of ${fixture.name}, given to another fixture's event`).to.equal(undefined);
          seen.set(id, fixture.name);
        }
      }
    });

    it('gives an event the same id each time it is read (a provider retry is recognized)', async () => {
      for (const fixture of contract.fixtures) {
        const ids = async () => (await adapter.normalize(fixture.request)).map((e) => e.providerEventId);
        expect(await ids(), fixture.name).to.deep.equal(await ids());
      }
    });

    /** What verifying, then normalizing, the request gives: each step's events, or the error it threw. */
    const outcomes = async (request: InboundRequest): Promise<Array<NormalizedEvent[] | unknown>> => {
      const steps = [
        () => adapter.verify(request, endpoint, context()).then(() => []),
        () => adapter.normalize(request),
      ];
      const results: Array<NormalizedEvent[] | unknown> = [];
      for (const step of steps)
        results.push(
          await Promise.resolve()
            .then(step)
            .catch((err: unknown) => err),
        );
      return results;
    };

    it('answers garbage with a ProviderError or no event, never another exception', async () => {
      for (const text of GARBAGE)
        for (const outcome of await outcomes(contract.sign(Buffer.from(text, 'latin1'), endpoint, NOW))) {
          if (Array.isArray(outcome)) expect(outcome, `events from ${JSON.stringify(text)}`).to.deep.equal([]);
          else expect(isProviderError(outcome), `${JSON.stringify(text)}: ${String(outcome)}`).to.equal(true);
        }
    });

    it('answers names of the object prototype (`constructor`, `__proto__`) with a ProviderError or known events only', async () => {
      const known = new Set<string>(EVENT_TYPES);
      for (const name of PROTOTYPE_NAMES)
        for (const outcome of await outcomes(contract.sign(everyTextAs(contract.body, name), endpoint, NOW))) {
          if (Array.isArray(outcome))
            expect(
              outcome.filter((e: NormalizedEvent) => !known.has(e.type)),
              `${name}: events of no known type`,
            ).to.deep.equal([]);
          else expect(isProviderError(outcome), `${name}: ${String(outcome)}`).to.equal(true);
        }
    });

    it('hands our ids back through its outgoing headers, of names the host leaves to adapters', async () => {
      const headers = adapter.outgoingHeaders({ messageId: 4711, subscriberId: 815 });
      expect(Object.keys(headers)).to.not.be.empty;
      const hosts = new Set(HOST_HEADERS.map((name) => name.toLowerCase()));
      expect(
        Object.keys(headers).filter((name) => hosts.has(name.toLowerCase())),
        'headers the host writes itself (HOST_HEADERS): a mail would carry the host value, not the adapter one',
      ).to.deep.equal([]);
      const events = await adapter.normalize(contract.echo(headers));
      expect(events).to.not.be.empty;
      for (const event of events) expect(event).to.include({ messageId: 4711, subscriberId: 815 });
    });
  });
}
