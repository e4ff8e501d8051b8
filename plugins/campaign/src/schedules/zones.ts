import { loadOnFirstUse } from '@switchboard/core';

const luxon = loadOnFirstUse(() => require('luxon') as typeof import('luxon'));

/** A Region/City name luxon knows; `Etc/...` names are fixed offsets or UTC, not a place with DST rules. */
const isRegionCity = (zone: string) => /^[A-Za-z]+(\/[A-Za-z0-9_+-]+)+$/.test(zone) && !zone.startsWith('Etc/');
export const isIanaZone = (zone: string) => isRegionCity(zone) && luxon().DateTime.local().setZone(zone).isValid;

/**
 * What a schedule's timezone may be: the IANA time zone database's current Region/City names (@vvo/tzdb;
 * the service also asks luxon, so one this runtime's data lacks is refused). Not Intl's list: it holds
 * CLDR's names, which keep old spellings (Asia/Calcutta, Europe/Kiev), leave out the current ones
 * (Asia/Kolkata, Europe/Kyiv), and differ from one Node to the next (session 26).
 */
export const SCHEDULE_ZONES: readonly string[] = (require('@vvo/tzdb/time-zones-names.json') as string[]).filter(
  isRegionCity,
);
