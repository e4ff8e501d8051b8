import { expect } from 'chai';
import pino from 'pino';
import type { ProviderAdapter } from '@switchboard/provider-kit';
import { BUILT_IN_PROVIDERS, loadProviderAdapters, ProviderAdapters } from '../provider-adapters';

describe('campaign: provider adapters named in the config', () => {
  it('loads each named package, its headers merged for outgoing mail', () => {
    const adapters = loadProviderAdapters({
      provider_a: '@switchboard/provider-a',
      provider_c: '@switchboard/provider-c',
    });
    expect(adapters.keys()).to.deep.equal(['provider_a', 'provider_c']);
    expect(Object.keys(adapters.outgoingHeaders({ messageId: 1, subscriberId: 2 })).sort()).to.deep.equal([
      'X-PM-Metadata-campaign_message_id',
      'X-PM-Metadata-campaign_subscriber_id',
      'X-SMTPAPI',
    ]);
  });

  it('loads the adapters built into the repository by default', () => {
    const adapters = loadProviderAdapters(BUILT_IN_PROVIDERS);
    expect(adapters.keys()).to.deep.equal(['provider_a', 'provider_b', 'provider_c', 'provider_d', 'provider_e']);
    expect(adapters.outgoingHeaders({ messageId: 1, subscriberId: 2 })).to.include({
      'X-Mailgun-Variables': '{"campaign_message_id":"1","campaign_subscriber_id":"2"}',
      'X-Mailin-custom': '{"campaign_message_id":"1","campaign_subscriber_id":"2"}',
    });
  });

  it('stops start-up saying what to install when a package is missing, or is not that adapter', () => {
    expect(() => loadProviderAdapters({ provider_b: '@acme/no-such-adapter' })).to.throw(
      'Provider adapter provider_b: package @acme/no-such-adapter is not installed. Install it (npm install @acme/no-such-adapter)',
    );
    expect(() => loadProviderAdapters({ provider_b: '@switchboard/provider-a' })).to.throw(
      'Provider adapter provider_b: package @switchboard/provider-a does not export the adapter of provider_b (it exports the adapter of provider_a)',
    );
    // A package exporting the adapter under a name of its own is told where it must be.
    expect(() => loadProviderAdapters({ provider_f: '@switchboard/provider-kit' })).to.throw(
      /does not export the adapter of provider_f \(the adapter must be its main export \(module.exports or default\), with key, verify and normalize; it exports EVENT_TYPES, /,
    );
  });

  it("one adapter's bug never stops the mail: a throw or a value that is no text adds nothing, logged once a minute; a name is taken once in any case", () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const adapter = (key: string, outgoingHeaders: () => Record<string, unknown>) =>
      ({ key, outgoingHeaders }) as unknown as ProviderAdapter;
    const adapters = new ProviderAdapters(
      new Map([
        ['provider_a', adapter('provider_a', () => ({ 'X-SMTPAPI': '{}' }))],
        [
          'broken',
          adapter('broken', () => {
            throw new Error('adapter bug');
          }),
        ],
        ['odd', adapter('odd', () => ({ 'x-smtpapi': 'second', 'X-Odd': 42, 'X-Fine': 'yes' }))],
      ]),
      logger,
    );
    for (let i = 0; i < 3; i++)
      expect(adapters.outgoingHeaders({ messageId: 1, subscriberId: 2 })).to.deep.equal({
        'X-SMTPAPI': '{}',
        'X-Fine': 'yes',
      });
    expect(lines.map((l) => JSON.parse(l).msg)).to.deep.equal([
      'Provider adapter broken: outgoingHeaders threw: adapter bug; mail goes without its headers',
      'Provider adapter odd: outgoingHeaders gave X-Odd a value that is no text; mail goes without its headers',
    ]);
  });
});
