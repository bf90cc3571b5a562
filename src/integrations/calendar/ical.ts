import type ICAL from 'ical.js';
import { lazyModule } from '../lazy-module.ts';

const load = lazyModule<{ default: typeof ICAL }>('ical.js');

/** ical.js, loaded on first use (a feed served, a recurrence expanded, a CalDAV answer read). */
export const ical = (): typeof ICAL => load().default;
