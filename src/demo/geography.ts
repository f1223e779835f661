import type { Random } from './random.js';
import { CITY_NAMES } from './vocabulary.js';

/**
 * Where a ZIP is, roughly: the first ZIP digits of each state (USPS ranges, simplified) with a point near
 * the middle of the region. Enough for plausible city/state/coordinates on synthetic addresses.
 */
const ZIP3_REGIONS: readonly (readonly [string, string, number, number])[] = [
  ['005', 'NY', 40.8, -73.0],
  ['006', 'PR', 18.2, -66.5],
  ['010', 'MA', 42.3, -71.8],
  ['028', 'RI', 41.7, -71.5],
  ['030', 'NH', 43.2, -71.5],
  ['039', 'ME', 44.7, -69.4],
  ['050', 'VT', 44.0, -72.7],
  ['055', 'MA', 42.4, -71.1],
  ['056', 'VT', 44.0, -72.7],
  ['060', 'CT', 41.6, -72.7],
  ['070', 'NJ', 40.2, -74.6],
  ['100', 'NY', 40.7, -73.9],
  ['120', 'NY', 42.8, -75.5],
  ['150', 'PA', 40.9, -77.8],
  ['197', 'DE', 39.0, -75.5],
  ['200', 'DC', 38.9, -77.0],
  ['206', 'MD', 39.0, -76.7],
  ['220', 'VA', 37.5, -78.8],
  ['247', 'WV', 38.6, -80.6],
  ['270', 'NC', 35.6, -79.4],
  ['290', 'SC', 33.9, -80.9],
  ['300', 'GA', 32.7, -83.4],
  ['320', 'FL', 28.6, -82.4],
  ['350', 'AL', 32.8, -86.8],
  ['370', 'TN', 35.9, -86.4],
  ['386', 'MS', 32.7, -89.7],
  ['398', 'GA', 31.6, -84.2],
  ['400', 'KY', 37.5, -85.3],
  ['430', 'OH', 40.3, -82.8],
  ['460', 'IN', 39.9, -86.3],
  ['480', 'MI', 43.3, -84.5],
  ['500', 'IA', 42.0, -93.5],
  ['530', 'WI', 44.6, -89.9],
  ['550', 'MN', 45.9, -94.3],
  ['569', 'DC', 38.9, -77.0],
  ['570', 'SD', 44.4, -100.2],
  ['580', 'ND', 47.5, -100.5],
  ['590', 'MT', 46.9, -110.0],
  ['600', 'IL', 40.0, -89.2],
  ['630', 'MO', 38.4, -92.5],
  ['660', 'KS', 38.5, -98.4],
  ['680', 'NE', 41.5, -99.8],
  ['700', 'LA', 31.1, -92.0],
  ['716', 'AR', 34.9, -92.4],
  ['730', 'OK', 35.6, -97.5],
  ['750', 'TX', 31.5, -98.8],
  ['800', 'CO', 39.0, -105.5],
  ['820', 'WY', 43.0, -107.5],
  ['832', 'ID', 44.4, -114.6],
  ['840', 'UT', 39.3, -111.7],
  ['850', 'AZ', 34.3, -111.7],
  ['870', 'NM', 34.4, -106.1],
  ['885', 'TX', 31.8, -106.4],
  ['889', 'NV', 38.5, -117.0],
  ['900', 'CA', 36.8, -119.4],
  ['967', 'HI', 20.8, -156.3],
  ['970', 'OR', 43.9, -120.6],
  ['980', 'WA', 47.4, -120.5],
  ['995', 'AK', 61.4, -150.0],
];

/** Real ZIPs spread over the country; the ones outside an agency's area make its out-of-area leads. */
const FAR_AWAY_ZIPS = [
  '99501',
  '96813',
  '04101',
  '59601',
  '82001',
  '58501',
  '83702',
  '03301',
  '05602',
  '87501',
  '32801',
  '98101',
];

export interface ZipPlace {
  zip: string;
  city: string;
  state: string;
  latitude: number;
  longitude: number;
  areaCode: string;
}

const AREA_CODES = [
  '216',
  '234',
  '305',
  '312',
  '330',
  '404',
  '412',
  '419',
  '503',
  '512',
  '513',
  '614',
  '615',
  '704',
  '713',
  '740',
  '816',
  '919',
  '937',
  '971',
];

function zipNumber(zip: string): number {
  return Number(zip.slice(0, 5));
}

/** City, state, a center point and a local area code, stable per ZIP. */
export function placeOf(zip: string): ZipPlace {
  const zip3 = zip.slice(0, 3);
  const [, state, latitude, longitude] = ZIP3_REGIONS.findLast(([start]) => start <= zip3) ?? ZIP3_REGIONS[0];
  const n = zipNumber(zip);
  return {
    zip,
    city: CITY_NAMES[n % CITY_NAMES.length],
    state,
    // Neighbouring ZIPs land near each other within the region.
    latitude: latitude + ((n % 100) - 50) / 80,
    longitude: longitude + ((Math.floor(n / 100) % 10) - 5) / 6,
    areaCode: AREA_CODES[n % AREA_CODES.length],
  };
}

/** A point within a few kilometres of the ZIP's center, as the numeric(9, 6) strings the table stores. */
export function coordinatesNear(place: ZipPlace, rng: Random): { latitude: string; longitude: string } {
  return {
    latitude: (place.latitude + (rng.next() - 0.5) / 20).toFixed(6),
    longitude: (place.longitude + (rng.next() - 0.5) / 20).toFixed(6),
  };
}

export function outOfAreaZips(serviceZips: ReadonlySet<string>): string[] {
  return FAR_AWAY_ZIPS.filter((zip) => !serviceZips.has(zip));
}
