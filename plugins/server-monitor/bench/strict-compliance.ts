import type { Knex } from 'knex';
import { CADENCE_MS, plansOf, Tier, TIERS } from '../src/shared/plans';

export interface StrictCompliance {
  /** Percentages, floored to 0.01; null without a whole window. */
  min: number | null;
  mean: number | null;
  windows: number;
  servers: number;
  /** Servers without a check result in the worst window. */
  missed_in_worst: number | null;
  per_window: number[];
}

/** Per window, the share of `total` servers checked in it (`checked` of them), floored to 0.01 %. */
export function complianceOf(checked: number[], total: number): StrictCompliance {
  const percent = (c: number) => (total ? Math.floor((c / total) * 10_000) / 100 : 100);
  const shares = checked.map(percent);
  return {
    min: shares.length ? Math.min(...shares) : null,
    mean: shares.length ? percent(checked.reduce((a, b) => a + b, 0) / checked.length) : null,
    windows: shares.length,
    servers: total,
    missed_in_worst: checked.length ? total - Math.min(...checked) : null,
    per_window: shares,
  };
}

/**
 * SLA compliance from the stored check results, without slack: for each whole cadence window after the
 * first ([start + k * cadence, start + (k + 1) * cadence), k >= 1, ending by `end`), the share of the
 * tier's servers (active organizations) with a check result whose time falls inside it. Windows start
 * with the benchmark's dispatch calls, so each holds one dispatch of the tier; the first holds the first
 * pass, measured on its own.
 */
export async function strictCompliance(knex: Knex, start: Date, end: Date): Promise<Record<Tier, StrictCompliance>> {
  const out = {} as Record<Tier, StrictCompliance>;
  for (const tier of TIERS) {
    const cadence = CADENCE_MS[tier];
    const ofTier = (q: Knex.QueryBuilder) =>
      q
        .join('organizations as o', 'o.id', 's.organization_id')
        .where('o.subscription_status', 'active')
        .whereIn('o.selected_plan', plansOf(tier));
    const [{ n: servers }] = await ofTier(knex('monitor_servers as s')).count({ n: '*' });
    const checked: number[] = [];
    for (let k = 1; start.getTime() + (k + 1) * cadence <= end.getTime(); k++) {
      const from = new Date(start.getTime() + k * cadence);
      const to = new Date(from.getTime() + cadence);
      const [{ n }] = await ofTier(
        knex('monitor_check_results as r').join('monitor_servers as s', 's.id', 'r.server_id'),
      )
        .where('r.checked_at', '>=', from)
        .andWhere('r.checked_at', '<', to)
        .countDistinct({ n: 'r.server_id' });
      checked.push(Number(n));
    }
    out[tier] = complianceOf(checked, Number(servers));
  }
  return out;
}
