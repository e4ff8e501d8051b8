import { PluginApi, PluginContext } from '@switchboard/core';
import { UNSUBSCRIBE_PATH } from '../shared/paths';
import { unsubscribePages } from '../shared/unsubscribe-pages';
import { UnsubscribeService } from './unsubscribe-service';

/** The unsubscribe link of every campaign mail. */
export function unsubscribeRoutes(api: PluginApi, ctx: PluginContext): void {
  unsubscribePages(api, UNSUBSCRIBE_PATH, ctx.container.resolve(UnsubscribeService), 'mail from us');
}
