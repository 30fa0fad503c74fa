// A stand-alone dynalite on loopback (bench/floor.ts: the product's RSS apart from its embedded store's).
// Buffers unpooled as in the embedded store (shared/store/local-dynamodb.ts, `unpooledBuffers`).
import dynalite from 'dynalite';
Buffer.poolSize = 0;
const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
