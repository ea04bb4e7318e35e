import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
import { SqliteReadStore } from './src/readstore/sqliteReadStore.js';
import { BLOCK_SPECS, blockChanges } from './test/support/sampleBlockStores.js';
import { listSamplesJson } from './queries/records/listSamples.js';
import { QUANTITY_SAMPLE_JSON } from './src/server/routes/samples.js';
import { recordKey } from './projections/records/recordIds.js';
const store = new SqliteReadStore({ path: join(mkdtempSync(join(tmpdir(),'h2p-')),'r.db') });
await store.ensureCollections(BLOCK_SPECS);
const base=Date.parse('2025-11-01T00:00:00Z');
for (let d=0; d<4; d++){ const docs:any[]=[]; for (let m=0;m<1440;m++) for (const k of [0,1]) { const t=new Date(base+d*86400000+m*60000).toISOString(); const ext=`${k}-${d}-${m}`;
 docs.push({type:'heart_rate',value:55+((m*7+k*3)%60),unit:'count/min',start_date:t,end_date:t,source_name:k?'Polar Flow':'Apple Watch',source_bundle_id:'x',device_model:'W',product_type:'W7',external_id:ext,was_user_entered:false,metadata:{HKTimeZone:'Europe/Berlin'},provider:'device-a',source:k?'polar':'apple',device:'W (W7)',body_worn:true,_id:recordKey('u','device-a',ext),id:1e6+d*10000+m*2+k,user_id:'u',tenant_id:'t',day:t.slice(0,10),ingested_at:'2026-11-26T00:00:00.000Z',hidden:k===1,excluded:false,quality:[]}); }
 await store.applyChanges(blockChanges(docs)); }
const view = process.argv[2] as any;
const q={userId:'u',type:'heart_rate',window:{start:base+86400000+7*3600000,end:null},view};
for (let i=0;i<100;i++) await listSamplesJson(store,q,QUANTITY_SAMPLE_JSON,{limit:1000});
const c0=process.cpuUsage(); const t=performance.now(); for (let i=0;i<500;i++) await listSamplesJson(store,q,QUANTITY_SAMPLE_JSON,{limit:1000}); const c=process.cpuUsage(c0); console.log(view,(performance.now()-t)/500, 'cpu', (c.user+c.system)/1000/500);
