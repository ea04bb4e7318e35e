/**
 * The LOINC display (Long Common Name) of every LOINC code the service emits: the quantity
 * catalog's codes, the code the R4 oxygen saturation profile fixes, and the sleep and workout
 * codes of the FHIR view (src/fhir/). FHIR codings carry it as `display` (issue 23); a catalog code
 * without a display here fails the catalog test.
 */
export const LOINC_DISPLAYS: Readonly<Record<string, string>> = {
  '8867-4': 'Heart rate',
  '40443-4': 'Heart rate --resting',
  '55423-8': 'Number of steps in unspecified time Pedometer',
  '41981-2': 'Calories burned',
  '80404-7': 'R-R interval.standard deviation (Heart rate variability)',
  '59408-5': 'Oxygen saturation in Arterial blood by Pulse oximetry',
  '2708-6': 'Oxygen saturation in Arterial blood',
  '9279-1': 'Respiratory rate',
  '29463-7': 'Body weight',
  '41982-0': 'Percentage of body fat Measured',
  '8310-5': 'Body temperature',
  '2339-0': 'Glucose [Mass/volume] in Blood',
  '8480-6': 'Systolic blood pressure',
  '8462-4': 'Diastolic blood pressure',
  '8302-2': 'Body height',
  '39156-5': 'Body mass index (BMI) [Ratio]',
  '8280-0': 'Waist Circumference at umbilicus by Tape measure',
  '19870-5': 'Forced vital capacity [Volume] Respiratory system by Spirometry',
  '20150-9': 'FEV1',
  '93832-4': 'Sleep duration',
  '93831-6': 'Deep sleep duration',
  '93830-8': 'Light sleep duration',
  '93829-0': 'REM sleep duration',
  '101691-4': 'Duration of physical activity',
};

export const LOINC = 'http://loinc.org';

/** A LOINC coding with its display. */
export function loincCoding(code: string): { system: string; code: string; display?: string } {
  const display = LOINC_DISPLAYS[code];
  return display === undefined ? { system: LOINC, code } : { system: LOINC, code, display };
}
