export { changelogCommands, changelogNoticesTask, processChangelogNotices } from './commands';
export { changelogRoutes, changelogUnsubscribeRoutes } from './routes';
export { ChangelogPublisher } from './publisher';
