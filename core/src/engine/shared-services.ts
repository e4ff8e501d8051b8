import { container as globalContainer, DependencyContainer } from 'tsyringe';
import { createClient, RedisClientType } from 'redis';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/types';
import { TOKENS } from '../container/tokens';
import { Clock, systemClock } from '../clock';
import { createKnex } from '../db/knex';
import { createLogger } from '../logger';
import { createJobQueues } from '../queue';
import { createLocks } from '../locks';
import { createMailer } from '../mail/mailer';
import { Metrics } from '../http/metrics';
import type { JobQueues } from '../queue/types';
import type { Locks } from '../locks/types';

export interface SharedServiceOverrides {
  logger?: Logger;
  clock?: Clock;
}

/** The root container: config, logger, database, Redis, queues, locks, clock, mailer, metrics. */
export async function createRootContainer(config: AppConfig, overrides: SharedServiceOverrides = {}): Promise<DependencyContainer> {
  const root = globalContainer.createChildContainer();
  const logger = overrides.logger ?? createLogger(config.logLevel);
  let redis: RedisClientType | null = null;
  if (config.redisUrl) {
    redis = createClient({ url: config.redisUrl }) as RedisClientType;
    redis.on('error', (err) => logger.warn({ err }, 'redis connection error'));
    await redis.connect();
  }
  const queues = createJobQueues({ redisUrl: config.redisUrl, prefix: config.redisPrefix, logger });
  root.register(TOKENS.Config, { useValue: config });
  root.register(TOKENS.Logger, { useValue: logger });
  root.register(TOKENS.Clock, { useValue: overrides.clock ?? systemClock });
  root.register(TOKENS.Knex, {
    useValue: createKnex(config.databaseUrl, { log: { warn: (m) => logger.warn(m), error: (m) => logger.error(m) } }),
  });
  // tsyringe does not accept null as a value, so the absent client comes from a factory.
  root.register(TOKENS.Redis, { useFactory: () => redis });
  root.register(TOKENS.Queues, { useValue: queues });
  root.register(TOKENS.Locks, { useValue: createLocks({ redis, prefix: config.redisPrefix }) });
  root.register(TOKENS.Mailer, { useValue: createMailer({ smtpUrl: config.smtpUrl, outboxDir: config.outboxDir }) });
  root.register(TOKENS.Metrics, { useValue: new Metrics(queues) });
  return root;
}

export async function closeSharedServices(root: DependencyContainer, timeoutMs: number): Promise<void> {
  await root.resolve<JobQueues>(TOKENS.Queues).closeAll(timeoutMs);
  await root.resolve<Locks>(TOKENS.Locks).close();
  root.resolve<{ close(): void }>(TOKENS.Mailer).close();
  const redis = root.resolve<RedisClientType | null>(TOKENS.Redis);
  if (redis?.isOpen) await redis.quit();
  await root.resolve<Knex>(TOKENS.Knex).destroy();
}
