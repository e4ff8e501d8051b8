/** Keys of the shared services in the root container (`@inject(SERVICES.Knex)`). */
export const SERVICES = {
  Config: 'Config',
  Logger: 'Logger',
  Knex: 'Knex',
  Redis: 'Redis',
  Queues: 'Queues',
  Locks: 'Locks',
  Clock: 'Clock',
  Mailer: 'Mailer',
  Metrics: 'Metrics',
  /** Seals and opens secrets kept at rest with the application key (SecretBox). */
  SecretBox: 'SecretBox',
  /** Checks tenants' URLs and carries requests made for them, away from private networks (OutboundGuard). */
  OutboundGuard: 'OutboundGuard',
  /** Holds work while the database lacks migrations of this release (SchemaGate). */
  SchemaGate: 'SchemaGate',
  /** The resources the enabled plugins declare (string[]). */
  Resources: 'Resources',
} as const;
