/** The most lists one send or schedule may name. */
export const MAX_SEND_LISTS = 100;
