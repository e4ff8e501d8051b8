/** A share of sent mail in percent, two decimals; 0 before anything is sent. */
export const rate = (part: number, sent: number) => (sent > 0 ? Math.round((part / sent) * 10_000) / 100 : 0);
