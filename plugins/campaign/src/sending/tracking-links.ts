import { inject, injectable } from 'tsyringe';
import { AppConfig, SERVICES } from '@switchboard/core';
import { LinkSigner } from '../shared/link-signer';
import { TRACK_PATH } from '../shared/paths';

/**
 * The links a mail's clicks are tracked through: http(s) in any case, up to 2,048 characters (the click
 * route's limit: a longer link is left as it is, untracked, rather than broken).
 */
export const TRACKED_LINK = { pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2048 } as const;

export interface MailTracking {
  /** The open pixel's URL, when opens are tracked. */
  open?: string;
  /** The redirect through which a link is clicked, when clicks are tracked. */
  click?(url: string): string;
}

export interface TrackedIds {
  organizationId: number;
  sendId: number;
  subscriberId: number;
}

/**
 * Signed tracking URLs of one mail. A click's target is part of what is signed (the purpose names it),
 * so a link cannot be turned into a redirect to anywhere else.
 */
@injectable()
export class TrackingLinks {
  constructor(
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(LinkSigner) private readonly signer: LinkSigner,
  ) {}

  async forMail(ids: TrackedIds, options: { opens: boolean; clicks: boolean }): Promise<MailTracking> {
    if (!options.opens && !options.clicks) return {};
    const sign = await this.signer.signing();
    const path = [ids.organizationId, ids.sendId, ids.subscriberId];
    const base = `${this.config.publicUrl}${TRACK_PATH}`;
    return {
      open: options.opens ? `${base}/o?token=${sign('open', path)}` : undefined,
      click: options.clicks
        ? (url) => `${base}/c?token=${sign(`click ${url}`, path)}&u=${encodeURIComponent(url)}`
        : undefined,
    };
  }

  async readOpen(token: string): Promise<TrackedIds | null> {
    return this.read(await this.signer.verify('open', token));
  }

  async readClick(token: string, url: string): Promise<TrackedIds | null> {
    return this.read(await this.signer.verify(`click ${url}`, token));
  }

  private read(ids: number[] | null): TrackedIds | null {
    if (!ids || ids.length !== 3) return null;
    return { organizationId: ids[0], sendId: ids[1], subscriberId: ids[2] };
  }
}
