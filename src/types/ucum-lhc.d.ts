// The package ships no types; these cover the calls we make.
declare module '@lhncbc/ucum-lhc' {
  type Conversion = { status: 'succeeded' | 'failed' | 'error'; toVal: number; msg: string[] };
  type Validation = { status: 'valid' | 'invalid' | 'error'; ucumCode: string | null; msg: string[] };
  interface UcumLhcUtils {
    convertUnitTo(fromUnitCode: string, fromVal: number, toUnitCode: string): Conversion;
    validateUnitString(unit: string): Validation;
  }
  const ucum: { UcumLhcUtils: { getInstance(): UcumLhcUtils } };
  export default ucum;
}
