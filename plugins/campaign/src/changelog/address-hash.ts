import crypto from 'node:crypto';

/**
 * What makes two changelog subscriptions one address (its consent, its unsubscribe): the e-mail lower-cased,
 * as mailboxes are in practice, then compared byte for byte as a SHA-256 whatever a column's collation
 * (MariaDB's default would take an accented look-alike, another mailbox, for the address).
 */
export const addressHashOf = (email: string): string =>
  crypto.createHash('sha256').update(email.toLowerCase()).digest('hex');
