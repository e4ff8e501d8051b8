import type { Plan } from '@switchboard/core';

/** Premium plans: every paid one. */
export const PREMIUM_PLANS: Plan[] = ['basic', 'pro', 'enterprise'];
export const CHECK_TYPES = ['all', 'premium', 'free'] as const;
export type CheckType = (typeof CHECK_TYPES)[number];
export type Tier = 'premium' | 'free';
export const TIERS: Tier[] = ['premium', 'free'];

export const plansOf = (type: CheckType | Tier): Plan[] =>
  type === 'premium' ? PREMIUM_PLANS : type === 'free' ? ['free'] : ['free', ...PREMIUM_PLANS];
export const tierOf = (plan: string): Tier => (plan === 'free' ? 'free' : 'premium');

/** How often each tier is checked, which is also its SLA: checked within the last cadence. */
export const CADENCE_MS: Record<Tier, number> = { premium: 60_000, free: 300_000 };

/** Days logs and check results are kept, per plan (docs/decisions.md, Server monitor). */
export const RETENTION_DAYS: Record<Plan, number> = { free: 7, basic: 30, pro: 90, enterprise: 365 };
