import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { SERVICES } from '../container/service-keys';
import { Clock } from '../clock';
import { insertedId, toInt, toIsoRequired, toOneOf, toText } from '../db/values';

export const PLANS = ['free', 'basic', 'pro', 'enterprise'] as const;
export const SUBSCRIPTION_STATUSES = ['active', 'inactive'] as const;
export type Plan = (typeof PLANS)[number];

export interface Organization {
  id: number;
  name: string;
  selected_plan: Plan;
  subscription_status: string;
  created_at: string;
  updated_at: string;
}

const toOrganization = (row: Record<string, unknown>): Organization => ({
  id: toInt(row.id),
  name: toText(row.name),
  selected_plan: toOneOf(row.selected_plan, PLANS),
  subscription_status: toText(row.subscription_status),
  created_at: toIsoRequired(row.created_at),
  updated_at: toIsoRequired(row.updated_at),
});

@injectable()
export class OrganizationService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async create(input: { name: string; plan?: Plan; subscriptionStatus?: string }): Promise<Organization> {
    const now = this.clock.now();
    const id = insertedId(
      await this.knex('organizations').insert({
        name: input.name,
        selected_plan: input.plan ?? 'free',
        subscription_status: input.subscriptionStatus ?? 'active',
        created_at: now,
        updated_at: now,
      }),
    );
    return (await this.get(id))!;
  }

  async get(id: number): Promise<Organization | null> {
    const row = await this.knex('organizations').where({ id }).first();
    return row ? toOrganization(row) : null;
  }

  async findByName(name: string): Promise<Organization | null> {
    const row = await this.knex('organizations').where({ name }).orderBy('id').first();
    return row ? toOrganization(row) : null;
  }
}
