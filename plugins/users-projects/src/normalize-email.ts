/** Users sign in with their address, so the whole of it is compared without case. */
export const normalizeUserEmail = (email: string) => email.trim().toLowerCase();
