import type { Command } from 'commander';
import { CliError, compileValidator, idOf, loadOnFirstUse, oneLine, printResult } from '@switchboard/core';
import type { PluginContext } from '@switchboard/core';
import { asCliError } from '../shared/cli';
import { SERVER_STATES } from '../shared/active-servers';
import { createServerBody, NewServer } from './schemas';
import { OperatorServer, ServersService } from './service';

const validateServer = loadOnFirstUse(() => compileValidator(createServerBody, 'body'));
const PLANS = ['free', 'basic', 'pro', 'enterprise'];

const since = (iso: string | null) => (iso ? `since ${iso.slice(0, 16).replace('T', ' ')} UTC` : '');
const line = (s: OperatorServer) =>
  [
    String(s.id).padStart(6),
    s.state.toUpperCase().padEnd(7),
    `${oneLine(s.title)} <${oneLine(s.endpoint)}>`,
    `org ${s.organization_id} (${s.plan})`,
    s.state === 'down' ? `${s.status ?? ''} ${since(s.down_since)}`.trim() : (s.status ?? ''),
  ].join('  ');

/**
 * `servermonitor:servers`, `servermonitor:server:add` and `servermonitor:server:remove`: the servers of
 * every organization for an operator, as the servers API shows one organization's.
 */
export function serverCommands(program: Command, context: () => Promise<PluginContext>): void {
  program
    .command('servermonitor:servers')
    .description('list monitored servers with their state (down ones longest outage first with --down)')
    .option('--down', 'only servers that are down')
    .option('--state <state>', `only servers in this state: ${SERVER_STATES.join(', ')}`)
    .option('--organization <id>', 'only servers of this organization')
    .option('--plan <plan>', `only servers of organizations on this plan: ${PLANS.join(', ')}`)
    .option('--search <text>', 'only servers whose title or endpoint contains this')
    .option('--limit <n>', 'at most this many (default 100)', '100')
    .option('--json', 'print one JSON object')
    .action(
      async (o: {
        down?: boolean;
        state?: string;
        organization?: string;
        plan?: string;
        search?: string;
        limit: string;
        json?: boolean;
      }) => {
        const state = o.down ? 'down' : o.state;
        if (state !== undefined && !(SERVER_STATES as readonly string[]).includes(state))
          throw new CliError(`--state must be one of ${SERVER_STATES.join(', ')}`);
        if (o.plan !== undefined && !PLANS.includes(o.plan))
          throw new CliError(`--plan must be one of ${PLANS.join(', ')}`);
        const organizationId = o.organization === undefined ? undefined : idOf(o.organization);
        if (organizationId === null) throw new CliError('--organization must be an organization id');
        const limit = idOf(o.limit);
        if (limit === null || limit > 10_000) throw new CliError('--limit must be a whole number from 1 to 10000');
        const ctx = await context();
        const { items, total } = await ctx.container
          .resolve(ServersService)
          .across({ state, organizationId, plan: o.plan, search: o.search, limit });
        const what = state ? `${state} servers` : 'servers';
        const human = items.length
          ? [...items.map(line), `${items.length} of ${total} ${what}`].join('\n')
          : `no ${what}`;
        printResult(o.json, { total, servers: items }, human);
      },
    );

  program
    .command('servermonitor:server:add')
    .description("add a server to an organization's monitoring")
    .requiredOption('--organization <id>', 'the organization')
    .requiredOption('--title <title>', 'what people call it')
    .requiredOption('--endpoint <url>', 'the http(s) URL to check')
    .option('--notes <text>', 'anything to remember about it')
    .option('--paused', 'add it paused (nothing checks it until resumed)')
    .option('--json', 'print one JSON object')
    .action(
      async (o: {
        organization: string;
        title: string;
        endpoint: string;
        notes?: string;
        paused?: boolean;
        json?: boolean;
      }) => {
        const organizationId = idOf(o.organization);
        if (organizationId === null) throw new CliError('--organization must be an organization id');
        const input = {
          title: o.title.trim(),
          endpoint: o.endpoint.trim(),
          ...(o.notes !== undefined ? { notes: o.notes } : {}),
          ...(o.paused ? { paused: true } : {}),
        };
        let server: NewServer;
        try {
          server = validateServer()<NewServer>(input);
        } catch (err) {
          return asCliError(err);
        }
        const ctx = await context();
        const added = await ctx.container.resolve(ServersService).createFor(organizationId, server).catch(asCliError);
        printResult(
          o.json,
          added,
          `added server ${added.id}: ${oneLine(added.title)} <${oneLine(added.endpoint)}> (${added.state})`,
        );
      },
    );

  program
    .command('servermonitor:server:remove')
    .description('stop monitoring a server (its check results, log and heartbeats go with it)')
    .argument('<id>', 'the server')
    .option('--json', 'print one JSON object')
    .action(async (id: string, o: { json?: boolean }) => {
      const serverId = idOf(id);
      if (serverId === null) throw new CliError('the server id must be a positive integer');
      const ctx = await context();
      const title = await ctx.container.resolve(ServersService).removeAny(serverId).catch(asCliError);
      printResult(o.json, { removed: serverId, title }, `removed server ${serverId}: ${oneLine(title)}`);
    });
}
