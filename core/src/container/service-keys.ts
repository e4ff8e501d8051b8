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
  Scheduler: 'Scheduler',
  /** The resources the enabled plugins declare (string[]). */
  Resources: 'Resources',
} as const;
