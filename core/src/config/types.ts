/** A rate-limit policy of one plugin: counts per token, and per client address without a valid token. */
export interface RateLimitPolicy {
  windowSeconds: number;
  /** `overall` counts every request; a method key counts only that method. */
  perToken: { overall: number } & Partial<Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', number>>;
  perAddress: number;
}

export interface PluginConfig {
  id: string;
  /** npm package that default-exports the plugin. */
  package: string;
  options: Record<string, unknown>;
  rateLimits?: RateLimitPolicy;
}

export interface DkimKey {
  /** The From domain whose mail it signs. */
  domain: string;
  selector: string;
  privateKey: string;
}

export interface MailConfig {
  maxConnections: number;
  messagesPerSecond?: number;
  dkim: DkimKey[];
  /** One mail's whole hand-over to SMTP at most (the mailer's default when absent). */
  sendTimeoutMs?: number;
}

export type AppEnv = 'local' | 'staging' | 'production';

export interface AppConfig {
  version: string;
  appEnv: AppEnv;
  host: string;
  port: number;
  publicUrl: string;
  /** Whether PUBLIC_URL was set (otherwise publicUrl is http://HOST:PORT, or what a running `serve` recorded). */
  publicUrlGiven?: boolean;
  databaseUrl: string;
  redisUrl?: string;
  /** Every Redis key (queues, limits, locks) starts with this. */
  redisPrefix: string;
  dataDir: string;
  smtpUrl?: string;
  outboxDir: string;
  /** Mails the outbox keeps, the newest (OUTBOX_KEEP; 0: all). */
  outboxKeep: number;
  /** SMTP pool size, throttle and DKIM keys (config file `mail`). */
  mail: MailConfig;
  logLevel: string;
  /** Enabled plugins, in the order the host listed them. */
  plugins: PluginConfig[];
  rateLimitScale: number;
  /** Multiplier of every limit for organizations on a plan (opt-in: a plan not named counts 1). */
  planRateLimits: Record<string, number>;
  /** Multiplier of every limit for one token id (opt-in: a token not named counts 1). */
  tokenRateLimits: Record<string, number>;
  trustedProxies: string[];
  bodyLimit: string;
  /** Seconds a verified token stays cached in a process at most (0: no cache); revocations drop it sooner. */
  tokenCacheSeconds: number;
  shutdownTimeoutMs: number;
  /** The environment the config was read from, empty values dropped: plugins read their own variables here. */
  env: Readonly<Record<string, string>>;
}
