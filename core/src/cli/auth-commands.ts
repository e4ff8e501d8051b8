import type { Command } from 'commander';
import { OrganizationService, PLANS, Plan, SUBSCRIPTION_STATUSES } from '../auth/organizations';
import { ApiTokenService } from '../auth/api-tokens';
import { permissionProblem } from '../auth/permissions';
import { parseAllowlist } from '../auth/ip-allowlist';
import { CliError, idOf, printResult } from './output';
import type { WithEngine } from './engine-commands';
import { loadOnFirstUse } from '../load-on-first-use';

// Loaded where first used: `--help` lists the commands without it.
const luxon = loadOnFirstUse(() => require('luxon') as typeof import('luxon'));

/** An id as an operator types it: digits without a leading zero (`0x10` or `1e1` is not token 16 or 10). */

const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function registerAuthCommands(program: Command, withEngine: WithEngine, resources: string[]): void {
  program
    .command('org:create')
    .description('create an organization and print its id')
    .requiredOption('--name <name>', 'organization name')
    .option('--plan <plan>', `one of ${PLANS.join(', ')}`, 'free')
    .option('--subscription <status>', `one of ${SUBSCRIPTION_STATUSES.join(', ')}`, 'active')
    .option('--json', 'print one JSON object')
    .action((opts: { name: string; plan: string; subscription: string; json?: boolean }) => {
      if (!(PLANS as readonly string[]).includes(opts.plan))
        throw new CliError(`--plan must be one of ${PLANS.join(', ')}`);
      if (!(SUBSCRIPTION_STATUSES as readonly string[]).includes(opts.subscription)) {
        throw new CliError(`--subscription must be one of ${SUBSCRIPTION_STATUSES.join(', ')}`);
      }
      if (!opts.name.trim()) throw new CliError('--name must not be empty');
      return withEngine(async (engine) => {
        const org = await engine.container
          .resolve(OrganizationService)
          .create({ name: opts.name.trim(), plan: opts.plan as Plan, subscriptionStatus: opts.subscription });
        printResult(opts.json, org, String(org.id));
      });
    });

  program
    .command('token:create')
    .description('create an API token and print it once (only its hash is stored)')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--name <name>', 'what the token is for')
    .option('--permissions <list>', 'comma-separated resource:action list, or * for all', '*')
    .option('--ip <list>', 'comma-separated addresses and CIDR ranges allowed to use it')
    .option('--expires <iso>', 'expiry as an ISO 8601 timestamp')
    .option('--json', 'print one JSON object')
    .action(
      (opts: { org: string; name: string; permissions: string; ip?: string; expires?: string; json?: boolean }) => {
        const orgId = idOf(opts.org);
        if (orgId === null) throw new CliError('--org must be an organization id');
        if (!opts.name.trim()) throw new CliError('--name must not be empty');
        const permissions = list(opts.permissions);
        if (!permissions.length) throw new CliError('--permissions must name at least one permission');
        for (const p of permissions) {
          const problem = permissionProblem(p, resources);
          if (problem) throw new CliError(`--permissions: ${problem}`);
        }
        // `--ip "$ALLOWED"` with the variable unset must not make a token usable from anywhere.
        const ip = opts.ip === undefined ? undefined : list(opts.ip);
        if (ip && !ip.length) throw new CliError('--ip must name at least one address or range');
        if (ip) {
          try {
            parseAllowlist(ip);
          } catch (err) {
            throw new CliError(`--ip: ${(err as Error).message}`);
          }
        }
        // ISO 8601 as written, a day that exists: Date alone took `1` as 2001 and 2030-02-30 as 2 March.
        const expiresAt = opts.expires ? isoTime(opts.expires) : null;
        if (expiresAt === undefined)
          throw new CliError('--expires must be an ISO 8601 timestamp (2030-01-31 or 2030-01-31T12:00:00Z)');
        // Years 0 to 99 read back as 19xx or 20xx (JavaScript's Date of a year under 100, as drivers build
        // it): a token meant to be long expired would come back valid. Years past 9999 no database holds.
        const year = expiresAt?.getUTCFullYear();
        if (year !== undefined && (year < 1970 || year > 9999))
          throw new CliError('--expires must be a time between 1970 and 9999');
        return withEngine(async (engine) => {
          if (!(await engine.container.resolve(OrganizationService).get(orgId)))
            throw new CliError(`Organization ${orgId} does not exist`);
          const { token, info } = await engine.container
            .resolve(ApiTokenService)
            .create(orgId, { name: opts.name.trim(), permissions, ipAllowlist: ip, expiresAt });
          printResult(opts.json, { ...info, token }, token);
        });
      },
    );

  program
    .command('token:revoke')
    .description('revoke an API token by id')
    .argument('<id>', 'token id')
    .option('--json', 'print one JSON object')
    .action((id: string, opts: { json?: boolean }) =>
      withEngine(async (engine) => {
        const tokenId = idOf(id);
        if (tokenId === null || !(await engine.container.resolve(ApiTokenService).revoke(tokenId))) {
          throw new CliError(`Token ${id} does not exist`);
        }
        printResult(opts.json, { id: tokenId, revoked: true }, `Token ${tokenId} revoked`);
      }),
    );
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** An ISO 8601 date or date-time as written (a date alone midnight, a time without zone: UTC), else undefined. */
function isoTime(text: string): Date | undefined {
  if (!ISO_TIME.test(text.trim())) return undefined;
  const parsed = luxon().DateTime.fromISO(text.trim().replace(' ', 'T'), { zone: 'utc', setZone: true });
  return parsed.isValid ? parsed.toJSDate() : undefined;
}
