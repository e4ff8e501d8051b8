export {
  addMemberships,
  applyListDeltas,
  deleteMemberships,
  deltaOf,
  insertMemberships,
  ListsGone,
  moveMembershipStatus,
  removeAllMemberships,
} from './memberships';
export type { Membership } from './memberships';
export { assertListsOwned } from './ownership';
export { listRoutes } from './routes';
