import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import { addressAllowed, parseAllowlist } from '../auth/ip-allowlist';
import { ConfigError } from '../config/load-config';
import type { AppConfig } from '../config/types';
import { AppError } from './errors';

type MetricsConfig = Pick<AppConfig, 'appEnv' | 'env'>;

/**
 * Why /metrics is not served at all, or null: in staging and production it is served only once
 * `METRICS_TOKEN` or `METRICS_ALLOW` says to whom (it names every route, status and queue, and Node's
 * version); on a developer's machine it is open.
 */
export function metricsClosedReason(config: MetricsConfig): string | null {
  if (config.appEnv === 'local' || config.env.METRICS_TOKEN || config.env.METRICS_ALLOW) return null;
  return `Metrics are not served with APP_ENV=${config.appEnv} until METRICS_TOKEN or METRICS_ALLOW is set`;
}

/**
 * Who may read /metrics, from the environment: `METRICS_TOKEN` (a bearer token) and `METRICS_ALLOW`
 * (comma-separated addresses and CIDR ranges, matched against the client address). Each one set must
 * pass; with neither, /metrics is open with APP_ENV=local and refused elsewhere (`metricsClosedReason`).
 */
export function metricsAccess(config: MetricsConfig): Middleware {
  const { env } = config;
  const token = env.METRICS_TOKEN;
  const allow = env.METRICS_ALLOW ? allowlist(env.METRICS_ALLOW) : null;
  const expected = token ? digest(token) : null;
  const closed = metricsClosedReason(config);
  return async (ctx, next) => {
    if (closed) throw new AppError('AUTH_INSUFFICIENT_PERMISSIONS', closed);
    if (allow && !addressAllowed(ctx.state.clientAddress as string, allow)) {
      throw new AppError('AUTH_INSUFFICIENT_PERMISSIONS', 'Metrics are not served to this address');
    }
    if (expected) {
      const given = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('Authorization'))?.[1];
      // Digests have one length, so the comparison takes the same time whatever was sent.
      if (!given || !crypto.timingSafeEqual(digest(given), expected)) {
        throw new AppError('AUTH_INVALID_TOKEN', 'Metrics need Authorization: Bearer <METRICS_TOKEN>');
      }
    }
    return next();
  };
}

const digest = (text: string) => crypto.createHash('sha256').update(text).digest();

function allowlist(text: string) {
  try {
    return parseAllowlist(
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  } catch (err) {
    throw new ConfigError(`METRICS_ALLOW: ${(err as Error).message}`);
  }
}
