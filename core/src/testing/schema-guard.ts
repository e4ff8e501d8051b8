import type { Plugin } from '../plugin/types';
import { checkSchemaSnapshot, listTables, schemaFingerprint } from '../db/schema-fingerprint';
import { createTestEngine } from './engine';
import { embeddedBackend } from './services';

/**
 * A test that fails when a namespace's migrations build a schema other than the committed snapshot
 * while no new migration was added (so an existing migration was edited).
 */
export function itGuardsTheSchema(options: { namespace: string; plugins: Plugin<any>[]; snapshotFile: string }): void {
  it(`builds the schema of the committed snapshot (${options.namespace})`, async () => {
    const backend = embeddedBackend();
    const engine = await createTestEngine(backend, { plugins: options.plugins, migrate: false });
    try {
      const migrator = engine.migrator();
      const order = engine.migrationNamespaces().map((n) => n.id);
      for (const id of order.slice(0, order.indexOf(options.namespace))) await migrator.latest({ plugin: id });
      const before = new Set(await listTables(engine.knex));
      await migrator.latest({ plugin: options.namespace });
      const own = (await listTables(engine.knex)).filter((t) => !before.has(t));
      const status = (await migrator.status()).find((s) => s.plugin === options.namespace)!;
      const fingerprint = await schemaFingerprint(engine.knex, own);
      checkSchemaSnapshot({
        snapshotFile: options.snapshotFile,
        actual: { lastMigration: status.applied[status.applied.length - 1] ?? null, ...fingerprint },
      });
    } finally {
      await engine.close();
      await backend.dispose();
    }
  });
}
