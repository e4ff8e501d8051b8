// The alerts feature's front door: what the rest of the plugin may use (docs/architecture.md, feature folders).
export { AlertService, MAX_ATTEMPTS } from './alert-service';
export { ALERT_JOB } from './jobs';
export { SMS_SENDER, smsSenderOf } from './sms';
export { ADMIN_ROLE, administratorsOf } from './recipients';
export type { Administrator } from './recipients';
