import {
  addressInRanges,
  type AddressRefusal,
  allowedRangesOf,
  METADATA_RANGES,
  NON_PUBLIC_RANGES,
  type Ranges,
} from '@switchboard/core';

/** Where the engine's MonitorAddresses is registered in the plugin's container. */
export const MONITOR_ADDRESSES = 'servermonitor.MonitorAddresses';

/** The code of a connection a check refused to make: the check's status is `refused`. */
export const MONITOR_ADDRESS_REFUSED = 'ERR_MONITOR_ADDRESS_REFUSED';

/**
 * Where checks may connect (docs/decisions.md, server-monitor, Internal networks). Private networks and
 * loopback are allowed: watching internal servers is what a monitor is for. Refused: link-local and cloud
 * metadata addresses (core METADATA_RANGES) unless MONITOR_ALLOWED_RANGES allows them, and, once one of a
 * check's connections went to a public address, any later one to an address that is not public (a
 * redirect from the internet into private networks), whatever MONITOR_ALLOWED_RANGES says.
 */
export class MonitorAddresses {
  constructor(private readonly allowed: Ranges = []) {}

  /** MONITOR_ALLOWED_RANGES read; an entry that is no address or CIDR range stops start-up. */
  static fromEnv(env: Record<string, string | undefined>): MonitorAddresses {
    return new MonitorAddresses(allowedRangesOf(env.MONITOR_ALLOWED_RANGES, 'MONITOR_ALLOWED_RANGES'));
  }

  /**
   * Why a check may not connect to `address`, or null. A metadata address is named (it tells nothing of
   * the internal network); the private address a name resolved to after a public hop is not, the name is.
   */
  reason(address: string, hostname?: string, afterPublic = false): string | null {
    if (addressInRanges(address, METADATA_RANGES) && !addressInRanges(address, this.allowed))
      return `address ${address} is not allowed (link-local/metadata)`;
    if (afterPublic && !this.isPublic(address))
      return `a redirect from a public address to ${hostname ?? address} (private or loopback) is not followed`;
    return null;
  }

  /** The refusal core's guarded lookup and connector apply; `afterPublic()`: an earlier connection's address was public. */
  refusal(afterPublic: () => boolean = () => false): AddressRefusal {
    return (address, hostname) => {
      const reason = this.reason(address, hostname, afterPublic());
      return reason ? Object.assign(new Error(reason), { code: MONITOR_ADDRESS_REFUSED }) : null;
    };
  }

  /** Neither private, loopback, link-local nor reserved (core NON_PUBLIC_RANGES). */
  isPublic(address: string): boolean {
    return !addressInRanges(address, NON_PUBLIC_RANGES);
  }
}
