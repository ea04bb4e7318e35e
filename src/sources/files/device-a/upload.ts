import { type QuantityType } from '../../../catalog/quantityCatalog.js';
import { storageUnitConverter } from '../../../catalog/units.js';
import { boundedCache, type BoundedCache } from '../../../shared/boundedCache.js';
import type { Json } from '../../shared/recordError.js';
import { healthKitDeviceKind, isBodyWorn, vendorOf } from '../../shared/vendors.js';
import type { Metadata } from '../../../../commands/ingestion/records.js';
import { FlowDays, SleepSamples } from './endOfUploadSamples.js';
import { fail, strOrNull, type Times } from './lineFields.js';

// ---------------------------------------------------------------------------------------------
// Provenance (records.ts Provenance; docs/sources.md)
// ---------------------------------------------------------------------------------------------

export type Prov = {
  /** Grouping key of one HealthKit source on one device (sleep nights, cycles). */
  key: string;
  provider: string;
  source: string;
  device: string | null;
  body_worn: boolean;
  source_name: string | null;
  source_bundle_id: string | null;
  device_model: string | null;
  product_type: string | null;
  /** The device's manufacturer where the format tells it (part of the key only then). */
  maker: string | null;
};

/** The record's provenance (records.ts Provenance) from its line's. */
export const provenanceOf = (p: Prov) => ({ provider: p.provider, source: p.source, device: p.device, body_worn: p.body_worn });

/** What a quantity or category sample carries after its value, in the records' field order. */
export const sampleFieldsOf = (p: Prov, t: Pick<Times, 'start_date' | 'end_date'>, wasUserEntered: boolean, metadata: Metadata) => ({
  start_date: t.start_date,
  end_date: t.end_date,
  source_name: p.source_name,
  source_bundle_id: p.source_bundle_id,
  device_model: p.device_model,
  product_type: p.product_type,
  was_user_entered: wasUserEntered,
  metadata,
  ...provenanceOf(p),
});

function deviceLabel(model: string | null, productType: string | null): string | null {
  if (model && productType) return `${model} (${productType})`;
  return model ?? productType;
}

/** What one upload remembers while it streams: provenances, unit converters, and the samples the end of the upload needs. */
export class Upload {
  /**
   * Provenances by key. An upload is a stream of any length and its source names and device models
   * are the uploader's strings, so this is bounded too (an evicted provenance is rebuilt equal:
   * grouping goes by `key`, never by identity).
   */
  private readonly provs = boundedCache<Prov>({ maxKeyLength: 1024 });
  /** Consecutive lines mostly share a source: the last provenance is checked first. */
  private last: Prov | null = null;
  /** Per catalog type (a fixed vocabulary, so a Map), then per unit as sent (bounded). */
  private readonly converters = new Map<QuantityType, BoundedCache<((v: number) => number) | null>>();
  readonly sleep = new SleepSamples<Prov>();
  readonly flow = new FlowDays<Prov>();

  /**
   * `vendorOf` names the vendor of a line with no known bundle id (the Health app's export.xml carries
   * none; its device manufacturer or source name tell instead); null leaves the provider as the
   * source. It may read source_name, device_model, product_type and device_manufacturer (the key).
   */
  constructor(
    readonly provider: string,
    private readonly vendorOf: ((o: Json) => string | null) | null = null,
  ) {}

  /** Provenance of a line, cached per (bundle, name, model, product type): a handful per upload. */
  prov(o: Json): Prov {
    const bundle = strOrNull(o.source_bundle_id);
    const name = strOrNull(o.source_name);
    const model = strOrNull(o.device_model);
    const productType = strOrNull(o.product_type);
    // Only a format with a vendor resolver (export.xml) tells the manufacturer; device-a's keys stay as they were.
    const maker = this.vendorOf ? strOrNull(o.device_manufacturer) : null;
    const l = this.last;
    if (l && l.source_bundle_id === bundle && l.source_name === name && l.device_model === model && l.product_type === productType && l.maker === maker) return l;
    let key = `${bundle ?? ''}\u0000${name ?? ''}\u0000${model ?? ''}\u0000${productType ?? ''}`;
    if (maker !== null) key += `\u0000${maker}`;
    const p = this.provs.get(key, () => {
      let source = vendorOf(bundle, this.provider);
      if (source === this.provider && this.vendorOf) source = this.vendorOf(o) ?? source;
      return {
        key,
        provider: this.provider,
        source,
        device: deviceLabel(model, productType),
        body_worn: isBodyWorn(healthKitDeviceKind(productType, model, source)),
        source_name: name,
        source_bundle_id: bundle,
        device_model: model,
        product_type: productType,
        maker,
      };
    });
    this.last = p;
    return p;
  }

  /**
   * A value of catalog type `qt` in its storage unit, through UCUM (units.ts: the cached
   * storageUnitConverter gives toStorageUnit's results). Converters are looked up per type, then
   * per unit, so a line costs two small map lookups and no string building.
   */
  convert(qt: QuantityType, value: number, unit: string): number {
    if (unit === qt.unit) return value;
    let units = this.converters.get(qt);
    if (!units) this.converters.set(qt, (units = boundedCache({ max: 64 })));
    const fn = units.get(unit, () => storageUnitConverter(qt.type, unit));
    if (fn === null) fail(`cannot convert unit "${unit}" to ${qt.unit} (${qt.type})`);
    const v = fn(value);
    if (!Number.isFinite(v)) fail(`value ${value} ${unit} does not convert to a finite ${qt.unit}`);
    return v;
  }
}
