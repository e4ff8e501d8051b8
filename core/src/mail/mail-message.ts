/** A mail as the engine hands it to a Mailer. */
export interface MailMessage {
  from: string | { name: string; address: string };
  to: string;
  subject: string;
  html?: string;
  text?: string;
  headers?: Record<string, string>;
  replyTo?: string;
  /** The Message-ID header, angle brackets included; nodemailer makes one when absent. */
  messageId?: string;
}
