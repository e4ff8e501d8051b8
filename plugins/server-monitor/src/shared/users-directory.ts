import { defineService } from '@switchboard/core';
import type { UsersDirectory } from '@switchboard/plugin-users-projects';

export type { DirectoryReader, DirectoryUser, UsersDirectory } from '@switchboard/plugin-users-projects';

/**
 * users-projects' directory of users (administrators, addresses, phones), which alerts and the notification
 * setting read instead of its tables. The name is the contract users-projects provides (its package is
 * imported for types only); the descriptor's `needs` makes start-up check that an enabled plugin provides it.
 */
export const USERS_DIRECTORY = defineService<UsersDirectory>('users.directory', 'users-projects');
