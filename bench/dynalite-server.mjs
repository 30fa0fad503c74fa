// A stand-alone dynalite on loopback (bench/floor.ts: the product's RSS apart from its embedded store's).
import dynalite from 'dynalite';
const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
