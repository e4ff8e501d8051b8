const mysql = require('mysql2/promise');
const fs=require('fs');
const cpuOf = (pid) => { const f=fs.readFileSync(`/proc/${pid}/stat`,'utf8').split(') ')[1].split(' '); return (Number(f[11])+Number(f[12]))/100; };
const dbPid = Number(require('child_process').execFileSync('pgrep',['-x','mariadbd']).toString().split('\n')[0]);
const ev = (i) => JSON.stringify({ email: `user${i}@example.com`, timestamp: 1700000000+i, 'smtp-id': `<14c5d75ce93.dfd.64b469@ismtpd-555>`, event: 'open', category: ['cat facts'], sg_event_id: `sg_event_id-${i}-abcdefghijklmnop`, sg_message_id: `14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0`, useragent: 'Mozilla/4.0 (compatible; MSIE 6.1; Windows XP; .NET CLR 1.1.4322)', ip: '255.255.255.255', campaign_message_id: 5, campaign_subscriber_id: 1000+i });
const C=14; const row='('+Array(C).fill('?').join(', ')+')';
const sqlOf=(n)=>'insert ignore into ev (organization_id, webhook_endpoint_id, provider, provider_event_id, message_id, subscriber_id, recipient, event_type, bounce, provider_message_id, payload, event_at, received_at, receipt) values '+Array(n).fill(row).join(', ');
let seq=0;
function vals(n){ const v=[]; const now=new Date(); for(let i=0;i<n;i++){ const k=seq++; v.push(7,null,'provider_a',`open:sg-${k}-abcdefghijklmnop`,5,1000+k%20000,`user${k}@example.com`,'opened',null,null, ev(k), now, now, 'a1b2c3d4-e5f6-7890-abcd-ef1234567890'); } return v; }
(async()=>{
  const c = await mysql.createConnection({host:'127.0.0.1',user:'root',multipleStatements:true});
  await c.query('drop database if exists mb; create database mb; use mb; create table ev (id bigint unsigned auto_increment primary key, organization_id int unsigned not null, webhook_endpoint_id int unsigned null, provider varchar(32) not null, provider_event_id varchar(191) not null, message_id int unsigned null, subscriber_id int unsigned null, recipient varchar(320) null, event_type varchar(32) not null, bounce varchar(8) null, provider_message_id varchar(255) null, payload longtext not null, event_at datetime(3) not null, received_at datetime(3) not null, receipt char(36) null, unique key u (organization_id, provider, provider_event_id), key m (message_id, subscriber_id), key r (organization_id, received_at))');
  const modes = { prep8x50: async()=>{ for(let j=0;j<8;j++) await c.execute(sqlOf(50), vals(50)); }, prep2x200: async()=>{ for(let j=0;j<2;j++) await c.execute(sqlOf(200), vals(200)); }, text400: async()=>{ await c.query(sqlOf(400), vals(400)); }, prep4x100: async()=>{ for(let j=0;j<4;j++) await c.execute(sqlOf(100), vals(100)); },  };
  for (let round=0; round<3; round++) for (const [name,f] of Object.entries(modes)) {
    for(let w=0;w<20;w++) await f();
    const n0=process.cpuUsage(), d0=cpuOf(dbPid), t0=Date.now(); const N=150;
    for(let k=0;k<N;k++){ await c.query('begin'); await f(); await c.query('commit'); }
    const n1=process.cpuUsage(n0); const d1=cpuOf(dbPid)-d0;
    console.log(name, 'per 400 events: node', ((n1.user+n1.system)/1000/N).toFixed(2),'ms, db', (d1*1000/N).toFixed(2),'ms, wall',((Date.now()-t0)/N).toFixed(2));
  }
  await c.query('drop database mb'); await c.end();
})();
