import { inject, injectable } from 'tsyringe';
import { validationError } from '@switchboard/core';
import { SenderProfilesService } from '../content/sender-profiles';
import type { SenderIdentity } from './composer';

/**
 * Who a message is from: its own from_name and from_email, else the organization's default sender
 * profile; the reply-to address always comes from that profile.
 */
@injectable()
export class SenderIdentities {
  constructor(@inject(SenderProfilesService) private readonly profiles: SenderProfilesService) {}

  async of(
    organizationId: number,
    message: { id: number; from_name: string | null; from_email: string | null },
  ): Promise<SenderIdentity> {
    const profile = await this.profiles.defaultFor(organizationId);
    const fromEmail = message.from_email ?? profile?.from_email;
    if (!fromEmail) {
      throw validationError(
        'from_email',
        'required',
        `Message ${message.id} has no from_email and the organization has no default sender profile`,
      );
    }
    return {
      fromEmail,
      fromName: message.from_email ? message.from_name : (message.from_name ?? profile?.from_name ?? null),
      replyTo: profile?.reply_to_email ?? null,
    };
  }
}
