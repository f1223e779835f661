import { PlatformError } from '../../shared/platform-error.js';

type ZipSource = 'patient_zip_code' | 'zip_code' | 'patient_address';

export interface ServiceZip {
  /** As sent: 12345 or 12345-6789. */
  zip_code: string;
  /** The five digits the service area is keyed by. */
  zip5: string;
  source: ZipSource;
}

export interface ServiceAddress {
  address_line_1: string | null;
  address_line_2: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
}

interface AddressFields {
  patient_address?: string;
  patient_zip_code?: string;
  zip_code?: string;
}

const ZIP = /^\d{5}(?:-\d{4})?$/;
const TRAILING_ZIP = /[\s,]*\b(\d{5}(?:-\d{4})?)$/;
/** "[City] ST 12345[-6789]", the last comma-separated part of a US address. */
const CITY_STATE_ZIP = /^(?:(.*?)\s+)?([A-Za-z]{2})\s+(\d{5}(?:-\d{4})?)$/;
const STATES = new Set(
  (
    'AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY ' +
    'AS GU MP PR VI'
  ).split(' '),
);

const blankToNull = (text: string | undefined) => text?.replace(/\s+/g, ' ').trim() || null;

/** Street lines, city and state when the address reads "street[, line 2], city, ST 12345"; otherwise all of it is line 1. */
export function parseServiceAddress(text: string | undefined): ServiceAddress | null {
  const address = blankToNull(text);
  if (!address) return null;
  const parts = address
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const tail = CITY_STATE_ZIP.exec(parts.at(-1) ?? '');
  if (!tail || !STATES.has(tail[2].toUpperCase())) {
    const zip = TRAILING_ZIP.exec(address);
    return {
      address_line_1: zip ? address.slice(0, zip.index) || null : address,
      address_line_2: null,
      city: null,
      state: null,
      zip_code: zip?.[1] ?? null,
    };
  }
  const [, beforeState = null, state, zip] = tail;
  const street = parts.slice(0, -1);
  // "street, city ST zip" or "street, [line 2,] city, ST zip"; without any comma the city cannot be told from the street.
  const city = street.length === 0 ? null : (beforeState ?? (street.length > 1 ? street.pop()! : null));
  if (street.length === 0 && beforeState) street.push(beforeState);
  const [line1 = null, ...line2] = street;
  return {
    address_line_1: line1,
    address_line_2: line2.join(', ') || null,
    city,
    state: state.toUpperCase(),
    zip_code: zip,
  };
}

function explicitZip(source: 'patient_zip_code' | 'zip_code', zip: string): ServiceZip {
  if (!ZIP.test(zip)) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      `${source} "${zip}" is not a US ZIP code (12345 or 12345-6789).`,
      { field: source },
    );
  }
  return { zip_code: zip, zip5: zip.slice(0, 5), source };
}

/** The ZIP rule: patient_zip_code, else the deprecated zip_code, else a ZIP at the end of patient_address (blank counts as absent). */
export function serviceZip(body: AddressFields, address: ServiceAddress | null): ServiceZip | null {
  const patientZip = blankToNull(body.patient_zip_code);
  if (patientZip) return explicitZip('patient_zip_code', patientZip);
  const aliasZip = blankToNull(body.zip_code);
  if (aliasZip) return explicitZip('zip_code', aliasZip);
  const fromAddress = address?.zip_code;
  return fromAddress ? { zip_code: fromAddress, zip5: fromAddress.slice(0, 5), source: 'patient_address' } : null;
}
