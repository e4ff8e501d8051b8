import { AppError, ApiGroup, PluginContext } from '@switchboard/core';
import { failingAs, KEYED_ANSWERS, keyParam, successSchema } from '../shared/api';
import { MonitorKey } from '../shared/key';
import { CHECK_TYPES, CheckType } from '../shared/plans';
import { CheckDispatcher, Dispatch } from './dispatcher';

export const dispatchOutput = (d: Dispatch) =>
  [
    `Dispatched ${d.dispatched} server checks (${d.newServers} new servers)`,
    ...d.recent.map((t) => `${t} servers were dispatched less than half a cadence ago`),
    ...d.busy.map((t) => `a dispatch of ${t} server checks was already running`),
  ].join('; ');

export const dispatchMessage = (type: CheckType, d: Dispatch) =>
  d.busy.length && !d.dispatched
    ? `A dispatch of ${type} server checks is already running`
    : `Server checks queued for ${type} servers`;

/** GET /check/{all|premium|free}/{api_key}: a check job per server of the plans (after heartbeats and ssl). */
export function checkRoutes(group: ApiGroup, ctx: PluginContext): void {
  const key = ctx.container.resolve(MonitorKey);
  const dispatcher = ctx.container.resolve(CheckDispatcher);
  group.get(
    '/check/:type/:key',
    {
      summary: 'Queue a check of every server of all, premium-plan or free-plan organizations',
      params: {
        type: 'object',
        required: ['type', 'key'],
        properties: {
          type: { type: 'string', description: 'all, premium or free (another value: 400 after the key is checked)' },
          key: keyParam,
        },
      },
      response: { schema: successSchema({ output: { type: 'string' } }, ['output']) },
      answers: {
        ...KEYED_ANSWERS,
        400: 'the type is not all, premium or free',
        402: 'No active subscriptions found',
        404: 'No servers found for active subscriptions',
      },
    },
    async ({ params }) => {
      key.require(params.key);
      if (!(CHECK_TYPES as readonly string[]).includes(params.type))
        throw new AppError('BAD_REQUEST', `Invalid type "${params.type}": the type must be all, premium or free`);
      const type = params.type as CheckType;
      const dispatch = await failingAs('Failed to initiate server check', () => dispatcher.dispatch(type));
      return { success: true, message: dispatchMessage(type, dispatch), output: dispatchOutput(dispatch) };
    },
  );
}
