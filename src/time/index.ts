export { waitUnlessAborted } from './wait.ts';
export {
  type DateTimeInput,
  formatInZone,
  isTimeZone,
  localDay,
  localDayLabel,
  localMinute,
  localTime,
  parseDateTime,
  startOfLocalDay,
  type WallClock,
  wallClock,
  wallDay,
  wallTime,
  zonedToInstant,
  zoneOffsetMinutes,
} from './zoned-time.ts';
