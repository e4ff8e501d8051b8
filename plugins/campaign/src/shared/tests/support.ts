import { createGramTable } from '../../../migrations/1.4/01-substring-index';
import { createAnalyticsSchema } from '../../../migrations/1.10/01-analytics-rollups';
import { addUnsubscribedAt } from '../../../migrations/1.10/02-changelog-notices';
import { addConfirmedAt } from '../../../migrations/1.11/01-changelog-consent';
import { addAskedAt } from '../../../migrations/1.11/02-changelog-asked-at';
import { addEngagementSchema } from '../../../migrations/1.12/01-every-open-counted';
import { addSealedSecret } from '../../../migrations/1.13/01-sealed-link-secret';
import { createConfirmationMailsDue } from '../../../migrations/1.14/01-confirmation-mails-due';
import { createSubscriberEngagement } from '../../../migrations/1.15/01-subscriber-engagement';
import { addSendWaiting } from '../../../migrations/1.16/01-send-waiting';
import { addAddressId, createChangelogAddresses } from '../../../migrations/1.18/01-changelog-addresses';
import { up as createWebhookTables } from '../../../migrations/1.10/03-outbound-webhooks';
import type { Server } from 'node:http';
import { type AppConfig, type Clock, type Engine, type SecretBox, SERVICES } from '@switchboard/core';
import {
  ApiClient,
  apiClient,
  createTestEngine,
  createTenant,
  TestBackend,
  TestTenant,
} from '@switchboard/core/testing';
import campaign from '../..';
import { CAMPAIGN_API_PREFIX } from '../paths';

export interface CampaignFixture {
  engine: Engine;
  server: Server;
  tenant: TestTenant;
  api(auth?: TestTenant): ApiClient;
  close(): Promise<void>;
}

/** The campaign plugin's own container (its services see the plugin's options). */
export const campaignContainer = (engine: Engine) => engine.contexts.get('campaign')!.container;

/** An engine with the campaign plugin, a listening server and one tenant with every permission. */
export async function campaignFixture(
  backend: TestBackend,
  env: Record<string, string> = {},
  clock?: Clock,
  overrides?: Partial<AppConfig>,
): Promise<CampaignFixture> {
  const engine = await createTestEngine(backend, {
    plugins: [campaign],
    env: { RATE_LIMIT_SCALE: '1000', ...env },
    clock,
    overrides,
  });
  const server = engine.http().listen(0);
  const tenant = await createTenant(engine);
  return {
    engine,
    server,
    tenant,
    api: (auth = tenant) => apiClient(server, CAMPAIGN_API_PREFIX, auth),
    async close() {
      server.close();
      await engine.close();
    },
  };
}

/**
 * An engine whose campaign schema is at an older version (migrated to the latest, then rolled back to
 * `version`), a listening server and one tenant: the start of an upgrade test.
 */
export async function campaignAtVersion(
  backend: TestBackend,
  version: string,
): Promise<{ engine: Engine; tenant: TestTenant; api: ApiClient; close(): Promise<void> }> {
  const engine = await createTestEngine(backend, { plugins: [campaign], migrate: false });
  await engine.migrator().latest();
  await engine.migrator().rollback({ plugin: 'campaign', to: version });
  // Today's code writes the substring index on every subscriber change; the migrations before 1.4 never
  // touch its table, and 1.4 builds it again from the subscribers.
  if (Number(version.split('.')[1]) < 4) await createGramTable(engine.knex);
  // The same for the analytics figures every subscriber change adds to (1.10).
  if (Number(version.split('.')[1]) < 10) {
    await createAnalyticsSchema(engine.knex);
    await addUnsubscribedAt(engine.knex);
    // Subscriber changes look for outbound webhooks to tell.
    await createWebhookTables(engine.knex);
  }
  // Changelog subscriptions are taken waiting for their address's consent (1.11).
  if (Number(version.split('.')[1]) < 11) {
    await addConfirmedAt(engine.knex);
    await addAskedAt(engine.knex);
  }
  // Every open and click is counted and recorded (1.12).
  if (Number(version.split('.')[1]) < 12) await addEngagementSchema(engine.knex);
  // The link-signing secret is read sealed (1.13); the plain one stays for the upgrade to seal.
  if (Number(version.split('.')[1]) < 13)
    await addSealedSecret(engine.knex, engine.container.resolve<SecretBox>(SERVICES.SecretBox));
  // Unconfirmed subscribers are recorded with their confirmation mail due (1.14).
  if (Number(version.split('.')[1]) < 14) await createConfirmationMailsDue(engine.knex);
  // First opens and clicks are counted in the subscribers' engagement rows (1.15).
  if (Number(version.split('.')[1]) < 15) await createSubscriberEngagement(engine.knex);
  // A send waiting for its relay says since when (1.16).
  if (Number(version.split('.')[1]) < 16) await addSendWaiting(engine.knex);
  // Changelog consent is its address's (1.18).
  if (Number(version.split('.')[1]) < 18) {
    await createChangelogAddresses(engine.knex);
    await addAddressId(engine.knex);
  }
  const tenant = await createTenant(engine);
  const server = engine.http().listen(0);
  return {
    engine,
    tenant,
    api: apiClient(server, CAMPAIGN_API_PREFIX, tenant),
    async close() {
      server.close();
      await engine.close();
    },
  };
}
