// The notifications feature's front door: what the rest of the plugin may use (docs/architecture.md, feature folders).
export { notificationCommands } from './commands';
