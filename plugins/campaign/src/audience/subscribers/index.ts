export { SubscriberWriter } from './writer';
export { ensureStatusCountRows } from './status-counts';
export { updateProfiles } from './profile-updates';
export { subscriberRoutes } from './routes';
export { profileColumns } from './rows';
export { createSubscriberBody, profileProperties } from './schemas';
export type { SubscriberProfile } from './schemas';
export { adjustStatusCounts } from './status-counts';
export { withProfile } from './writer';
