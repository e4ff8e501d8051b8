import { loadOnFirstUse } from '@switchboard/core';

const luxon = loadOnFirstUse(() => require('luxon') as typeof import('luxon'));

/** A Region/City name luxon knows; `Etc/...` names are fixed offsets or UTC, not a place with DST rules. */
const isRegionCity = (zone: string) => /^[A-Za-z]+(\/[A-Za-z0-9_+-]+)+$/.test(zone) && !zone.startsWith('Etc/');
export const isIanaZone = (zone: string) => isRegionCity(zone) && luxon().DateTime.local().setZone(zone).isValid;

/** Every Region/City name this runtime lists (Intl's canonical names): what a schedule's timezone may be. */
export const SCHEDULE_ZONES: readonly string[] = Intl.supportedValuesOf('timeZone').filter(isRegionCity);
