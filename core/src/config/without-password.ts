/**
 * A URL as an error or a log says it: its password masked, up to the last `@` before the host (a password
 * holding `/` or `@`, which makes the URL invalid, is masked whole). Start-up errors go to logs others read.
 */
export const withoutPassword = (value: string): string => value.replace(/^([a-z][\w+.-]*:\/\/[^:@/]*:).*@/i, '$1***@');
