// Run by the cluster profile's mongo-init job (docker-compose.yml): initiates the replica set
// rs0 of mongo1..mongo3 unless it exists, then waits until it has a primary.
const members = [0, 1, 2].map((i) => ({ _id: i, host: `mongo${i + 1}:27017` }));
try {
  rs.status();
  print('replica set rs0 already initiated');
} catch (err) {
  if (err.codeName !== 'NotYetInitialized') throw err;
  rs.initiate({ _id: 'rs0', members });
  print('replica set rs0 initiated');
}
for (let i = 0; i < 120; i++) {
  const status = rs.status();
  if (status.members.some((m) => m.stateStr === 'PRIMARY')) {
    print('replica set rs0 has a primary');
    quit(0);
  }
  sleep(1000);
}
print('replica set rs0 elected no primary in 120 s');
quit(1);
