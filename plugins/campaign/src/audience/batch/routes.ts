import { SERVICES } from '@switchboard/core';
import type { ApiGroup, JobQueues, PluginContext } from '@switchboard/core';
import { BatchImport } from './import';
import { BatchChanges } from './changes';
import { queueConfirmations } from '../../shared/confirmation-job';
import {
  batchCreateBody,
  batchDeleteBody,
  batchDeleteResultSchema,
  batchResultSchema,
  batchUpdateBody,
} from './schemas';
import { envelopes, okSchema } from '../../shared/envelope';

export function batchRoutes(group: ApiGroup, ctx: PluginContext): void {
  const importer = ctx.container.resolve(BatchImport);
  const changes = ctx.container.resolve(BatchChanges);
  const queues = ctx.container.resolve<JobQueues>(SERVICES.Queues);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  group
    .post(
      '/subscribers/batch',
      {
        summary: 'Create or update up to 1000 subscribers by email; each row succeeds or fails on its own',
        permission: 'subscribers:write',
        body: batchCreateBody,
        response: { schema: okSchema(batchResultSchema) },
      },
      async ({ auth, body }) => {
        const { unconfirmed, ...result } = await importer.run(auth.organizationId, body);
        await queueConfirmations(
          queues,
          ctx.logger,
          unconfirmed.map((subscriberId) => ({ organizationId: auth.organizationId, subscriberId })),
        );
        return envelope.ok(result);
      },
    )
    .put(
      '/subscribers/batch',
      {
        summary: 'Update up to 1000 subscribers, each by id or email',
        permission: 'subscribers:write',
        body: batchUpdateBody,
        response: { schema: okSchema(batchResultSchema) },
      },
      async ({ auth, body }) => envelope.ok(await changes.update(auth.organizationId, body.subscribers)),
    )
    .delete(
      '/subscribers/batch',
      {
        summary: 'Delete up to 1000 subscribers by ids and/or emails',
        permission: 'subscribers:write',
        body: batchDeleteBody,
        response: { schema: okSchema(batchDeleteResultSchema) },
      },
      async ({ auth, body }) => envelope.ok(await changes.delete(auth.organizationId, body)),
    );
}
