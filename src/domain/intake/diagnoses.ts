import type { components } from '../../generated/openapi.js';
import type { DiagnosisJson } from '../../resources/intakes/intake-tables.js';
import { PlatformError } from '../../shared/platform-error.js';

type Diagnosis = components['schemas']['Diagnosis'];

export interface IntakeDiagnoses {
  diagnoses: DiagnosisJson[];
  /** `primary_diagnosis` when diagnoses were sent but none is primary. */
  missing: string[];
}

/** Which entry is primary: the one marked is_primary: true, else the first unless it is marked false. */
function primaryIndex(sent: Diagnosis[]): number {
  const marked = sent.flatMap((d, i) => (d.is_primary === true ? [i] : []));
  if (marked.length > 1) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      `Only one diagnosis can be primary; entries ${marked.join(', ')} say is_primary: true.`,
      {
        field: `diagnoses[${marked[1]}].is_primary`,
      },
    );
  }
  if (marked.length === 1) return marked[0];
  return sent.length > 0 && sent[0].is_primary !== false ? 0 : -1;
}

export function intakeDiagnoses(sent: Diagnosis[] = []): IntakeDiagnoses {
  const primary = primaryIndex(sent);
  const diagnoses = sent.map((d, i) => ({
    code: d.code,
    ...(d.description === undefined ? {} : { description: d.description }),
    is_primary: i === primary,
  }));
  return { diagnoses, missing: sent.length > 0 && primary < 0 ? ['primary_diagnosis'] : [] };
}
