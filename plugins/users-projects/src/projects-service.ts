import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  rowMapper,
  Clock,
  insertedId,
  isForeignKeyViolation,
  ownedRow,
  paginate,
  SERVICES,
  validationError,
} from '@switchboard/core';
import { UsersService } from './users-service';
import { NewProject, Project, ProjectListQuery, projectSchema } from './schemas';

const toProject = rowMapper(projectSchema);

@injectable()
export class ProjectsService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(UsersService) private readonly users: UsersService,
  ) {}

  async list(orgId: number, q: ProjectListQuery): Promise<{ items: Project[]; total: number }> {
    const filtered = this.knex('projects').where({ organization_id: orgId });
    if (q.status) filtered.andWhere({ status: q.status });
    if (q.owner_id) filtered.andWhere({ owner_id: q.owner_id });
    return paginate(filtered, q, toProject.columns, toProject);
  }

  async get(orgId: number, id: number): Promise<Project> {
    return toProject(await ownedRow(this.knex, 'projects', orgId, id, toProject.columns, 'Project'));
  }

  async create(orgId: number, input: NewProject): Promise<Project> {
    const notAUser = () =>
      validationError('owner_id', 'exists', `owner_id ${input.owner_id} is not a user of this organization`);
    if (!(await this.users.exists(orgId, input.owner_id))) throw notAUser();
    const now = this.clock.now();
    // The owner may be deleted between the check and the insert: its foreign key then refuses the row.
    const inserted = await this.knex('projects')
      .insert({
        organization_id: orgId,
        name: input.name,
        description: input.description ?? null,
        owner_id: input.owner_id,
        status: input.status,
        created_at: now,
        updated_at: now,
      })
      .catch((err: unknown) => {
        throw isForeignKeyViolation(err) ? notAUser() : err;
      });
    return this.get(orgId, insertedId(inserted));
  }
}
