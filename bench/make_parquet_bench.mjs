// Writes the input of bench_parquet (bench/bench_parquet.cpp) with DuckDB, then times DuckDB
// reading the same two columns, for comparison with the native reader:
//   x      DOUBLE, never null;
//   image  BLOB of 512 to 1,520 incompressible bytes (MD5 digests), null every 50th row;
// in row groups of 10,000 rows, SNAPPY (DuckDB's default codec). 100,000 rows make ~100 MB.
// Prints one JSON line: DuckDB's best of 5 seconds and MB/s for each column, where a column's
// MB are its cells' bytes once read (8 per double; the blobs' lengths), as bench_parquet counts.
//
// Run (Node 18+, DuckDB's Node client installed outside the repository, as for
// tools/make_parquet_fixtures.mjs):
//   DUCKDB_NODE_DIR=/work/npm-duckdb node bench/make_parquet_bench.mjs [FILE] [ROWS]
// FILE defaults to $TMPDIR/vlbias_parquet_bench.parquet (bench_parquet's default), ROWS to 100000.
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const nodeDir = process.env.DUCKDB_NODE_DIR || '/work/npm-duckdb';
const require = createRequire(path.join(path.resolve(nodeDir), 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');

const file = process.argv[2] || path.join(os.tmpdir(), 'vlbias_parquet_bench.parquet');
const rows = Number(process.argv[3] || 100000);

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
await conn.run(`COPY (SELECT
    (i * 0.37) % 101 + sin(i) AS x,
    CASE WHEN i % 50 = 7 THEN NULL ELSE unhex(array_to_string(
      list_transform(range(32 + i % 64), k -> md5(i::VARCHAR || '-' || k::VARCHAR)), ''))
    END AS image
  FROM range(${rows}) t(i) ORDER BY i)
  TO '${file}' (FORMAT PARQUET, ROW_GROUP_SIZE 10000)`);

const value = async (sql) => (await conn.runAndReadAll(sql)).getRows()[0][0];
const best = async (sql) => {
  let seconds = Infinity;
  for (let k = 0; k < 5; ++k) {
    const start = process.hrtime.bigint();
    await value(sql);
    seconds = Math.min(seconds, Number(process.hrtime.bigint() - start) / 1e9);
  }
  return seconds;
};
const imageBytes = Number(
  await value(`SELECT sum(octet_length(image)) FROM read_parquet('${file}')`));
const threads = Number(await value(`SELECT current_setting('threads')`));
const x = await best(`SELECT sum(x) FROM read_parquet('${file}')`);
const image = await best(`SELECT sum(octet_length(image)) FROM read_parquet('${file}')`);
await conn.run(`SET threads = 1`);
const x1 = await best(`SELECT sum(x) FROM read_parquet('${file}')`);
const image1 = await best(`SELECT sum(octet_length(image)) FROM read_parquet('${file}')`);
const mbs = (bytes, s) => Math.round(bytes / s / 1e6);
console.log(JSON.stringify({
  file, rows, image_bytes: imageBytes, duckdb_threads: threads,
  duckdb_x: { seconds: x, mb_per_s: mbs(8 * rows, x) },
  duckdb_image: { seconds: image, mb_per_s: mbs(imageBytes, image) },
  duckdb_1_thread_x: { seconds: x1, mb_per_s: mbs(8 * rows, x1) },
  duckdb_1_thread_image: { seconds: image1, mb_per_s: mbs(imageBytes, image1) },
}));
