import { container as globalContainer, DependencyContainer, instanceCachingFactory } from 'tsyringe';
import type { RedisClientType } from 'redis';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/types';
import { SERVICES } from '../container/service-keys';
import { Clock, systemClock } from '../clock';
import { createKnex } from '../db/knex';
import { waitForFirstAnswer } from '../db/first-answer';
import { createLogger } from '../logger';
import { createJobQueues } from '../queue';
import { createLocks } from '../locks';
import { createMailer } from '../mail/mailer';
import { ApiTokenService } from '../auth/api-tokens';
import { SecretBox } from '../secrets/secret-box';
import { loadAppKey } from '../secrets/app-key';
import { OutboundGuard } from '../http/outbound-guard';
import type { JobQueues } from '../queue/types';
import type { Locks } from '../locks/types';
import { loadOnFirstUse } from '../load-on-first-use';
import { withinDeadline } from '../deadline';

const redisModule = loadOnFirstUse(() => require('redis') as typeof import('redis'));
const metricsModule = loadOnFirstUse(() => require('../http/metrics') as typeof import('../http/metrics'));

export interface SharedServiceOverrides {
  logger?: Logger;
  clock?: Clock;
}

/** Redis's answers refusing a connection's AUTH or SELECT. */
const REDIS_REFUSAL = /^(ERR|WRONGPASS|NOAUTH)\b/;
/** How long a process waits for Redis at start-up, and for its goodbye at shutdown. */
const REDIS_CONNECT_MS = 10_000;
const REDIS_QUIT_MS = 2_000;

/** The root container: config, logger, database, Redis, queues, locks, clock, mailer, metrics. */
export async function createRootContainer(
  config: AppConfig,
  overrides: SharedServiceOverrides = {},
): Promise<DependencyContainer> {
  const root = globalContainer.createChildContainer();
  // Before any connection: a deployment without its key stops here, with the message saying what to set.
  const secretBox = new SecretBox(loadAppKey(config));
  const outboundGuard = new OutboundGuard(config);
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const knex = createKnex(config.databaseUrl, {
    log: { warn: (m) => logger.warn(m), error: (m) => logger.error(m) },
  });
  // Before anything uses it: a database not up yet is waited for, a wrong URL is said so.
  await waitForFirstAnswer(knex, config.databaseUrl, logger).catch(async (err: unknown) => {
    await knex.destroy();
    throw err;
  });
  let redis: RedisClientType | null = null;
  if (config.redisUrl) {
    redis = redisModule().createClient({ url: config.redisUrl }) as RedisClientType;
    // A Redis that answers but refuses (a wrong password, a database index it lacks) is said so at once:
    // it was retried for 10 s, then reported as not answering (session 34).
    let refused = (_err: Error) => undefined as void;
    const refusal = new Promise<never>((_, reject) => (refused = reject));
    refusal.catch(() => undefined);
    let connecting = true;
    redis.on('error', (err: Error) => {
      // Once connected, a refusal (a password rotated, too many clients) is logged as any error.
      if (connecting && REDIS_REFUSAL.test(String(err?.message)))
        return refused(
          new Error(
            `Redis at REDIS_URL refuses this process: ${err.message} (check the password and database index of REDIS_URL)`,
          ),
        );
      logger.warn({ err }, 'redis connection error');
    });
    const client = redis;
    // node-redis retries a first connection forever: a process would neither start nor say why.
    await withinDeadline(
      Promise.race([redis.connect(), refusal]).finally(() => (connecting = false)),
      REDIS_CONNECT_MS,
      `Redis at REDIS_URL does not answer within ${REDIS_CONNECT_MS / 1000} s: start it, or unset REDIS_URL for the embedded default`,
    ).catch(async (err: unknown) => {
      client.destroy();
      await knex.destroy();
      throw err;
    });
  }
  const queues = createJobQueues({ redisUrl: config.redisUrl, prefix: config.redisPrefix, logger, reader: redis });
  root.register(SERVICES.Config, { useValue: config });
  root.register(SERVICES.Logger, { useValue: logger });
  root.register(SERVICES.Clock, { useValue: overrides.clock ?? systemClock });
  root.register(SERVICES.Knex, { useValue: knex });
  // tsyringe does not accept null as a value, so the absent client comes from a factory.
  root.register(SERVICES.Redis, { useFactory: () => redis });
  root.register(SERVICES.Queues, { useValue: queues });
  root.register(SERVICES.Locks, { useValue: createLocks({ redis, prefix: config.redisPrefix }) });
  root.register(SERVICES.Mailer, {
    useValue: createMailer({
      smtpUrl: config.smtpUrl,
      outboxDir: config.outboxDir,
      outboxKeep: config.outboxKeep,
      maxConnections: config.mail.maxConnections,
      messagesPerSecond: config.mail.messagesPerSecond,
      sendTimeoutMs: config.mail.sendTimeoutMs,
      dkim: config.mail.dkim,
    }),
  });
  // Made when the HTTP app is built: only serving needs prom-client.
  root.register(SERVICES.Metrics, { useFactory: instanceCachingFactory(() => new (metricsModule().Metrics)(queues)) });
  root.register(SERVICES.SecretBox, { useValue: secretBox });
  root.register(SERVICES.OutboundGuard, { useValue: outboundGuard });
  // One per engine: the HTTP pipeline and the commands share its cache, so a revocation is seen at once.
  root.registerSingleton(ApiTokenService);
  return root;
}

export async function closeSharedServices(root: DependencyContainer, timeoutMs: number): Promise<void> {
  root.resolve(ApiTokenService).close();
  await root.resolve<JobQueues>(SERVICES.Queues).closeAll(timeoutMs);
  await root.resolve<Locks>(SERVICES.Locks).close();
  root.resolve<{ close(): void }>(SERVICES.Mailer).close();
  await root.resolve<OutboundGuard>(SERVICES.OutboundGuard).close();
  const redis = root.resolve<RedisClientType | null>(SERVICES.Redis);
  // quit() waits for an answer a Redis gone away never gives: past a moment the connection is dropped.
  if (redis?.isOpen)
    await withinDeadline(redis.quit(), REDIS_QUIT_MS, 'redis quit').catch(() => {
      if (redis.isOpen) redis.destroy();
    });
  await root.resolve<Knex>(SERVICES.Knex).destroy();
}
