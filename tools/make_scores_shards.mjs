// Writes tests/fixtures/audits/scores/representation_scores_shards/: the rows of
// representation_scores.csv (tools/make_scores_fixtures.py) as two Parquet shards written by
// DuckDB (rows 0-99 and 100-190, in file order), so that tests/audits/scores_by_group_test.cpp
// can check that a folder of shards reads as the CSV it came from and is hashed as one input.
//
// Run (Node 18+, DuckDB's Node client installed outside the repository, as for
// tools/make_parquet_fixtures.mjs):
//   DUCKDB_NODE_DIR=/work/npm-duckdb node tools/make_scores_shards.mjs
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const nodeDir = process.env.DUCKDB_NODE_DIR || '/work/npm-duckdb';
const require = createRequire(path.join(path.resolve(nodeDir), 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'tests/fixtures/audits/scores');
const out = path.join(dir, 'representation_scores_shards');
fs.mkdirSync(out, { recursive: true });

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
// Every column as text, as the CSV holds it: the reader's numbers then come from the same digits.
await conn.run(`CREATE TABLE scores AS SELECT row_number() OVER () - 1 AS n, *
  FROM read_csv('${path.join(dir, 'representation_scores.csv')}', all_varchar = true)`);
const shards = [[0, 100], [100, 1000]];
for (const [s, [from, to]] of shards.entries()) {
  await conn.run(`COPY (SELECT * EXCLUDE (n) FROM scores WHERE n >= ${from} AND n < ${to} ORDER BY n)
    TO '${path.join(out, `train-0000${s}-of-00002.parquet`)}' (FORMAT parquet, COMPRESSION snappy)`);
}
console.log(`wrote ${shards.length} shards to ${path.relative(root, out)}`);
