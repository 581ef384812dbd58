// Writes the Parquet reader's fixtures: tests/fixtures/io/parquet/*.parquet, written by DuckDB,
// and beside each one FILE.expected.json holding DuckDB's own reading of that file (every cell
// as DuckDB's text, CAST(... AS VARCHAR); blobs as hex; null as null) and the encodings and
// codecs of its column chunks (parquet_metadata), for tests/io/parquet_test.cpp.
//
// Run (Node 18+, DuckDB's Node client installed outside the repository):
//   mkdir -p /work/npm-duckdb && (cd /work/npm-duckdb && npm install @duckdb/node-api)
//   DUCKDB_NODE_DIR=/work/npm-duckdb node tools/make_parquet_fixtures.mjs
// Written with @duckdb/node-api 1.5.6-r.1 (DuckDB v1.5.6). The data is deterministic (no random
// draws), so a rerun with the same DuckDB writes the same files.
//
// A second, independent writer writes the arrow_*.parquet files: arrow-rs (the Rust Parquet
// writer) compiled to WebAssembly, npm parquet-wasm 0.8.0 with apache-arrow 21:
//   mkdir -p /work/npm-pqwasm && (cd /work/npm-pqwasm && npm install parquet-wasm apache-arrow)
//   (PARQUET_WASM_DIR=/work/npm-pqwasm, the default). It covers what DuckDB does not write:
// DELTA_BYTE_ARRAY, dictionary pages that fall back to PLAIN within a chunk, unannotated binary
// columns (as pyarrow writes bytes), timestamps adjusted to UTC, unsigned and 8-bit integers,
// many small pages and an empty file. Their expected values are DuckDB's reading as well.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const nodeDir = process.env.DUCKDB_NODE_DIR || '/work/npm-duckdb';
const require = createRequire(path.join(path.resolve(nodeDir), 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');
const wasmDir = process.env.PARQUET_WASM_DIR || '/work/npm-pqwasm';
const requireWasm = createRequire(path.join(path.resolve(wasmDir), 'package.json'));
const pq = requireWasm('parquet-wasm');
const arrow = requireWasm('apache-arrow');

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'tests/fixtures/io/parquet');
fs.mkdirSync(path.join(out, 'shards'), { recursive: true });

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const run = (sql) => conn.run(sql);
const rows = async (sql) => (await conn.runAndReadAll(sql)).getRowObjectsJson();

// Every physical type DuckDB writes, with nulls (every 7th row) and the common logical types.
await run(`CREATE TABLE types AS SELECT
  i AS id,
  CASE WHEN i % 7 = 3 THEN NULL ELSE i % 3 = 0 END AS flag,
  CASE WHEN i % 7 = 4 THEN NULL ELSE (i * 37 - 500)::INTEGER END AS int32,
  CASE WHEN i % 7 = 5 THEN NULL ELSE (i * 123456789012 - 4000000000000)::BIGINT END AS int64,
  (i - 20)::TINYINT AS int8,
  (i * 800 - 16000)::SMALLINT AS int16,
  (i * 4000000000)::UBIGINT AS uint64,
  CASE WHEN i % 7 = 6 THEN NULL ELSE (i / 8.0 - 1.3)::FLOAT END AS float32,
  CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 0.1 - 2.7)::DOUBLE / 3 END AS float64,
  CASE WHEN i % 7 = 1 THEN NULL ELSE 'text ' || i || repeat('é', i % 4) END AS label,
  CASE WHEN i % 7 = 2 THEN NULL ELSE ('\\x00\\xFF' || i::VARCHAR)::BLOB END AS raw,
  (i * 1.25)::DECIMAL(9, 2) AS dec9,
  (i * 1000.125 - 7)::DECIMAL(18, 3) AS dec18,
  (i * 123456789.0123)::DECIMAL(30, 4) AS dec30,
  DATE '2020-02-27' + i::INTEGER AS day,
  TIMESTAMP '1969-12-31 23:59:58' + INTERVAL (i * 1500) MILLISECOND AS stamp,
  ('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID AS uid
FROM range(40) t(i)`);

// Low-cardinality columns (dictionary pages), an all-null column, an empty string.
await run(`CREATE TABLE dict AS SELECT
  i AS id,
  ['red', 'green', 'blue', 'ocre'][1 + i % 4] AS colour,
  CASE WHEN i % 5 = 0 THEN NULL ELSE (i % 3)::INTEGER END AS small,
  (i % 4) * 0.5 AS half,
  NULL::VARCHAR AS nothing,
  CASE WHEN i = 2 THEN '' ELSE 'x' END AS maybe_empty
FROM range(300) t(i)`);

// Several row groups (DuckDB flushes a row group per 2048-row vector boundary).
await run(`CREATE TABLE many AS SELECT
  i AS id,
  'g' || (i % 5) AS grp,
  CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 1000) * 0.25 END AS score,
  'r' || i AS name
FROM range(4200) t(i)`);

// Hugging Face's Image feature: struct<bytes: binary, path: string>.
await run(`CREATE TABLE images AS SELECT
  i AS id,
  CASE WHEN i = 3 THEN NULL ELSE {'bytes': ('\\x89PNG' || repeat('\\x00', i))::BLOB,
                                'path': CASE WHEN i = 1 THEN NULL ELSE 'img' || i || '.png' END}
  END AS image,
  ['a', 'b'][1 + i % 2] AS label
FROM range(6) t(i)`);

// Hugging Face's Image feature holding real images (tests/fixtures/encode/images, read as blobs
// with read_blob) for `vlbias dataset extract-images` (tests/cli/extract_images_test.cpp): paths
// kept, absent, unsafe ('../', absolute) and repeated; a null image; GIF and WebP magic numbers
// and bytes of no known format.
const imageDir = path.join(root, 'tests/fixtures/encode/images');
const blob = (name) => `(SELECT content FROM read_blob('${path.join(imageDir, name)}'))`;
await run(`CREATE TABLE hf_images AS SELECT * FROM (VALUES
  (0, {'bytes': ${blob('jpg_420.jpg')}, 'path': 'photos/a.jpg'}, 'female', 31),
  (1, {'bytes': ${blob('png_rgb8.png')}, 'path': NULL}, 'male', 45),
  (2, {'bytes': ${blob('jpg_grey.jpg')}, 'path': '../escape.jpg'}, 'female', NULL),
  (3, {'bytes': ${blob('png_rgb8.png')}, 'path': 'photos/a.jpg'}, 'male', 22),
  (4, NULL, 'female', 60),
  (5, {'bytes': 'GIF89a\\x01\\x00'::BLOB, 'path': '/abs/x.gif'}, NULL, 18),
  (6, {'bytes': 'RIFF\\x10\\x00\\x00\\x00WEBPVP8 '::BLOB, 'path': ''}, 'male', 70),
  (7, {'bytes': 'plain text'::BLOB, 'path': NULL}, 'female', 33)
) t(id, image, gender, age)`);

// Non-finite doubles: the table reads them as text, as CSV does (table.h).
await run(`CREATE TABLE nonfinite AS SELECT * FROM (VALUES (1, 1.5::DOUBLE), (2, 'nan'::DOUBLE),
  (3, 'inf'::DOUBLE), (4, '-inf'::DOUBLE), (5, NULL::DOUBLE)) t(id, x)`);

await run(`CREATE TABLE lists AS SELECT i AS id, [i, i + 1] AS pair FROM range(4) t(i)`);

const written = [];
async function write(name, table, options) {
  const file = path.join(out, name);
  await run(`COPY ${table} TO '${file}' (FORMAT parquet, ${options})`);
  written.push(name);
}

await write('types_uncompressed_v1.parquet', 'types', 'COMPRESSION uncompressed');
await write('types_snappy_v1.parquet', 'types', 'COMPRESSION snappy');
await write('types_gzip_v1.parquet', 'types', 'COMPRESSION gzip');
await write('types_zstd_v1.parquet', 'types', 'COMPRESSION zstd');
await write('types_uncompressed_v2.parquet', 'types', 'COMPRESSION uncompressed, PARQUET_VERSION v2');
await write('types_snappy_v2.parquet', 'types', 'COMPRESSION snappy, PARQUET_VERSION v2');
await write('types_gzip_v2.parquet', 'types', 'COMPRESSION gzip, PARQUET_VERSION v2');
await write('types_zstd_v2.parquet', 'types', 'COMPRESSION zstd, PARQUET_VERSION v2');
await write('dict_snappy_v1.parquet', 'dict', 'COMPRESSION snappy');
await write('dict_zstd_v2.parquet', 'dict', 'COMPRESSION zstd, PARQUET_VERSION v2');
await write('many_row_groups_zstd_v1.parquet', 'many', 'COMPRESSION zstd, ROW_GROUP_SIZE 2048');
await write('many_row_groups_snappy_v2.parquet', 'many',
            'COMPRESSION snappy, ROW_GROUP_SIZE 2048, PARQUET_VERSION v2');
await write('image_struct.parquet', 'images', 'COMPRESSION snappy');
await write('hf_images.parquet', 'hf_images', 'COMPRESSION snappy');
await write('nonfinite.parquet', 'nonfinite', 'COMPRESSION uncompressed');
await write('list_column.parquet', 'lists', 'COMPRESSION uncompressed');
for (let s = 0; s < 3; ++s) {
  const file = path.join(out, 'shards', `train-0000${s}-of-00003.parquet`);
  await run(`COPY (SELECT * FROM dict WHERE id % 3 = ${s} ORDER BY id) TO '${file}'
             (FORMAT parquet, COMPRESSION zstd)`);
}

// The Hugging Face layouts of `vlbias dataset fairface|socialcounterfactuals DIR`
// (tests/cli/dataset_hf_test.cpp): HuggingFaceM4/FairFace's 0.25/{train,validation}-*.parquet
// with ClassLabel codes (an out-of-range age code, a null image), and Intel/SocialCounterfactuals'
// data/train-*.parquet in two shards (an attribute type that is none of the three).
// The datasets library's schema metadata: {"info": {"features": {...}}} with ClassLabel names.
function hfFeatures(age, gender, race) {
  const label = (names) => ({ names, _type: 'ClassLabel' });
  return JSON.stringify({ info: { features: {
    image: { _type: 'Image' }, age: label(age), gender: label(gender), race: label(race),
    service_test: { dtype: 'bool', _type: 'Value' } } } });
}
{
  const hf = path.join(out, 'hf_fairface', '0.25');
  fs.mkdirSync(hf, { recursive: true });
  await run(`COPY (SELECT * FROM (VALUES
    ({'bytes': ${blob('jpg_420.jpg')}, 'path': NULL::VARCHAR}, 6::BIGINT, 0::BIGINT, 0::BIGINT, true),
    ({'bytes': ${blob('png_rgb8.png')}, 'path': NULL}, 2, 1, 2, false),
    ({'bytes': ${blob('jpg_grey.jpg')}, 'path': NULL}, 9, 0, 3, true)
  ) t(image, age, gender, race, service_test)) TO '${path.join(hf, 'train-00000-of-00001.parquet')}'
  (FORMAT parquet, COMPRESSION snappy)`);
  await run(`COPY (SELECT * FROM (VALUES
    ({'bytes': ${blob('jpg_1x1.jpg')}, 'path': 'val_1.jpg'}, 8::BIGINT, 1::BIGINT, 6::BIGINT, false),
    (NULL, 3, 0, 5, true)
  ) t(image, age, gender, race, service_test)) TO '${path.join(hf, 'validation-00000-of-00001.parquet')}'
  (FORMAT parquet, COMPRESSION zstd, KV_METADATA {huggingface: '${hfFeatures(
      ['0-2', '3-9', '10-19', '20-29', '30-39', '40-49', '50-59', '60-69', 'more than 70'],
      ['Male', 'Female'],
      ['East Asian', 'Indian', 'Black', 'White', 'Middle Eastern', 'Latino_Hispanic', 'Southeast Asian'])}'})`);
  // Another upload's class orders (nateraw/fairface's: genders and races sorted), named in the
  // shard's metadata: the reader maps codes by them.
  const other = path.join(out, 'hf_fairface_metadata');
  fs.mkdirSync(other, { recursive: true });
  await run(`COPY (SELECT * FROM (VALUES
    ({'bytes': ${blob('jpg_420.jpg')}, 'path': NULL::VARCHAR}, 6::BIGINT, 0::BIGINT, 0::BIGINT, true)
  ) t(image, age, gender, race, service_test)) TO '${path.join(other, 'train-00000-of-00001.parquet')}'
  (FORMAT parquet, KV_METADATA {huggingface: '${hfFeatures(
      ['0-2', '3-9', '10-19', '20-29', '30-39', '40-49', '50-59', '60-69', 'more than 70'],
      ['Female', 'Male'],
      ['Black', 'East Asian', 'Indian', 'Latino_Hispanic', 'Middle Eastern', 'Southeast Asian', 'White'])}'})`);
  const sc = path.join(out, 'hf_socialcounterfactuals', 'data');
  fs.mkdirSync(sc, { recursive: true });
  const scCols = 't(image, dataset_segment, a1_type, a2_type, counterfactual_set, caption, a1, a2, noun)';
  await run(`COPY (SELECT * FROM (VALUES
    ({'bytes': ${blob('jpg_420.jpg')}, 'path': '12_0.jpg'}, 'race_gender', 'race', 'gender',
     'race_gender_a_picture_of_plumber_12', 'A picture of a Middle Eastern female plumber',
     'Middle Eastern', 'female', 'plumber'),
    ({'bytes': ${blob('png_rgb8.png')}, 'path': '12_1.jpg'}, 'race_gender', 'race', 'gender',
     'race_gender_a_picture_of_plumber_12', 'A picture of a White male plumber', 'White', 'male',
     'plumber')
  ) ${scCols}) TO '${path.join(sc, 'train-00000-of-00002-aaaa.parquet')}' (FORMAT parquet)`);
  await run(`COPY (SELECT * FROM (VALUES
    ({'bytes': ${blob('jpg_grey.jpg')}, 'path': '7_0.jpg'}, 'physical_race', 'physical', 'race',
     'physical_race_a_picture_of_doctor_7', 'A picture of a skinny Black doctor', 'skinny',
     'Black', 'doctor'),
    ({'bytes': ${blob('png_1x1.png')}, 'path': '7_1.jpg'}, 'physical_race', 'age', 'race',
     'physical_race_a_picture_of_doctor_7', 'A picture of an old Black doctor', 'old', 'Black',
     'doctor')
  ) ${scCols}) TO '${path.join(sc, 'train-00001-of-00002-bbbb.parquet')}' (FORMAT parquet)`);
}

// arrow-rs: one file from columns of apache-arrow vectors, with writer properties.
function writeArrow(name, columns, props) {
  const table = pq.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table(columns), 'stream'));
  fs.writeFileSync(path.join(out, name), pq.writeParquet(table, props.build()));
  written.push(name);
}
const vec = (values, type) => arrow.vectorFromArray(values, type);
const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));
{
  const n = 120;
  writeArrow('arrow_delta_v2.parquet', {
    id: vec(range(n, (i) => i * 3 - 100), new arrow.Int32()),
    big: vec(range(n, (i) => (i % 7 === 0 ? null : BigInt(i - 60) * 987654321987n)), new arrow.Int64()),
    word: vec(range(n, (i) => (i % 9 === 4 ? null : 'prefix/common/' + String((i * 37) % 1000).padStart(4, '0'))),
              new arrow.Utf8()),
    name: vec(range(n, (i) => 'n' + 'x'.repeat(i % 5) + i), new arrow.Utf8()),
  }, new pq.WriterPropertiesBuilder().setDictionaryEnabled(false)
         .setColumnEncoding('id', pq.Encoding.DELTA_BINARY_PACKED)
         .setColumnEncoding('big', pq.Encoding.DELTA_BINARY_PACKED)
         .setColumnEncoding('word', pq.Encoding.DELTA_BYTE_ARRAY)
         .setColumnEncoding('name', pq.Encoding.DELTA_LENGTH_BYTE_ARRAY)
         .setWriterVersion(pq.WriterVersion.V2).setCompression(pq.Compression.ZSTD)
         .setDataPageSizeLimit(200).setWriteBatchSize(16));
}
{
  const n = 100;
  writeArrow('arrow_fallback_v1.parquet', {
    label: vec(range(n, (i) => (i % 11 === 5 ? null : 'label number ' + ((i * 7) % 61))), new arrow.Utf8()),
    flag: vec(range(n, (i) => (i % 13 === 0 ? null : i % 3 === 1)), new arrow.Bool()),
    f32: vec(range(n, (i) => i / 16 - 2.2), new arrow.Float32()),
    u32: vec(range(n, (i) => 4000000000 - i * 12345), new arrow.Uint32()),
    i8: vec(range(n, (i) => (i % 200) - 100), new arrow.Int8()),
    stamp: vec(range(n, (i) => Date.UTC(2023, 11, 31, 23, 59, 0) + i * 1250), new arrow.TimestampMillisecond('UTC')),
    day: vec(range(n, (i) => new Date(Date.UTC(1999, 11, 20) + i * 86400000)), new arrow.DateDay()),
    blob: vec(range(n, (i) => (i % 6 === 2 ? null : Uint8Array.from(range(i % 5 + 1, (k) => (i * 31 + k) % 256)))),
              new arrow.Binary()),
  }, new pq.WriterPropertiesBuilder().setDictionaryEnabled(true).setDictionaryPageSizeLimit(64)
         .setCompression(pq.Compression.SNAPPY).setMaxRowGroupSize(40).setDataPageSizeLimit(128)
         .setWriteBatchSize(8).setWriterVersion(pq.WriterVersion.V1));
}
writeArrow('arrow_empty.parquet', { id: vec([], new arrow.Int32()), s: vec([], new arrow.Utf8()) },
           new pq.WriterPropertiesBuilder());

// Images read in place by `encode`, `features`, `faces`, `label` and `generate lvlm`
// (--images T.parquet --column image; tests/cli/parquet_items_test.cpp), in items/:
// images.parquet (arrow-rs): Hugging Face's Image struct, five real images in row groups of two;
// images_changed.parquet: the same but row 3's bytes (jpg_444 -> jpg_422), and
// resume_before.parquet: row 4's bytes not an image, for a resume that stops at row 4;
// binary.parquet (DuckDB): the same images as a plain BLOB column; shards/ (DuckDB): rows 0-2
// and 3-4 of images.parquet as two shards.
{
  const items = path.join(out, 'items');
  fs.mkdirSync(path.join(items, 'shards'), { recursive: true });
  const names = ['jpg_420.jpg', 'png_rgb8.png', 'jpg_grey.jpg', 'jpg_444.jpg', 'png_rgba8.png'];
  const stored = ['a.jpg', null, 'c.jpg', 'd.jpg', 'e.png'];
  const imageType = new arrow.Struct([new arrow.Field('bytes', new arrow.Binary(), true),
                                      new arrow.Field('path', new arrow.Utf8(), true)]);
  const itemsTable = (files) => {
    const image = vec(files.map((f, i) => ({
      bytes: f === null ? new TextEncoder().encode('plain text')
                        : Uint8Array.from(fs.readFileSync(path.join(imageDir, f))),
      path: stored[i] })), imageType);
    return new arrow.Table({ id: vec(range(files.length, (i) => i), new arrow.Int32()), image,
                             label: vec(range(files.length, (i) => ['x', 'y'][i % 2]), new arrow.Utf8()) });
  };
  const props = () => new pq.WriterPropertiesBuilder().setCompression(pq.Compression.SNAPPY)
                          .setMaxRowGroupSize(2).build();
  const writeItems = (name, files) => {
    const table = pq.Table.fromIPCStream(arrow.tableToIPC(itemsTable(files), 'stream'));
    fs.writeFileSync(path.join(items, name), pq.writeParquet(table, props()));
  };
  writeItems('images.parquet', names);
  writeItems('images_changed.parquet', names.map((f, i) => (i === 3 ? 'jpg_422.jpg' : f)));
  writeItems('resume_before.parquet', names.map((f, i) => (i === 4 ? null : f)));
  const values = names.map((f, i) => `(${i}, ${blob(f)}, '${['x', 'y'][i % 2]}')`).join(', ');
  await run(`CREATE TABLE binary_items AS SELECT * FROM (VALUES ${values}) t(id, image, label)`);
  await run(`COPY binary_items TO '${path.join(items, 'binary.parquet')}' (FORMAT parquet)`);
  const structs = names.map((f, i) => `(${i}, {'bytes': ${blob(f)}, 'path': ${
    stored[i] === null ? 'NULL' : `'${stored[i]}'`}}, '${['x', 'y'][i % 2]}')`);
  for (const [s, part] of [[0, structs.slice(0, 3)], [1, structs.slice(3)]]) {
    await run(`COPY (SELECT * FROM (VALUES ${part.join(', ')}) t(id, image, label)) TO '${
      path.join(items, 'shards', `train-0000${s}-of-00002.parquet`)}' (FORMAT parquet)`);
  }
}

// DuckDB's reading of one file (or glob): per column its kind and every cell as text.
async function expected(glob) {
  const described = await rows(`DESCRIBE SELECT * FROM read_parquet('${glob}')`);
  const columns = [];
  for (const d of described) {
    const leaves = d.column_type.startsWith('STRUCT')
                       ? [['bytes', 'BLOB'], ['path', 'VARCHAR']].map(
                             ([f, t]) => [`${d.column_name}.${f}`, `"${d.column_name}".${f}`, t])
                       : [[d.column_name, `"${d.column_name}"`, d.column_type]];
    for (const [name, expr, type] of leaves) {
      const kind = type === 'BLOB' ? 'bytes'
                   : /^(U?TINYINT|U?SMALLINT|U?INTEGER|U?BIGINT|FLOAT|DOUBLE|DECIMAL)/.test(type)
                       ? 'number'
                       : 'text';
      const cell = kind === 'bytes' ? `hex(${expr})` : `CAST(${expr} AS VARCHAR)`;
      const values = (await rows(`SELECT ${cell} AS v FROM read_parquet('${glob}')`)).map((r) => r.v);
      columns.push({ name, duckdb_type: type, kind, values });
    }
  }
  const meta = await rows(`SELECT DISTINCT path_in_schema AS col, encodings, compression
                           FROM parquet_metadata('${glob}') ORDER BY ALL`);
  const groups = await rows(`SELECT count(DISTINCT (file_name, row_group_id)) AS n
                             FROM parquet_metadata('${glob}')`);
  return { row_groups: Number(groups[0].n), columns, chunks: meta };
}

// One column or chunk per line: small files that still diff readably.
function json_text(data) {
  const list = (items) => '[\n  ' + items.map((x) => JSON.stringify(x)).join(',\n  ') + '\n ]';
  return `{"file": ${JSON.stringify(data.file)}, "row_groups": ${data.row_groups},\n` +
         ` "chunks": ${list(data.chunks)},\n "columns": ${list(data.columns)}\n}\n`;
}

for (const name of written) {
  if (name === 'list_column.parquet') continue;  // refused by the reader: no values to compare
  const data = await expected(path.join(out, name));
  fs.writeFileSync(path.join(out, name.replace('.parquet', '.expected.json')),
                   json_text({ file: name, ...data }));
}
const shards = await expected(path.join(out, 'shards', '*.parquet'));
fs.writeFileSync(path.join(out, 'shards.expected.json'),
                 json_text({ file: 'shards', ...shards }));
for (const name of fs.readdirSync(out).sort()) {
  const stat = fs.statSync(path.join(out, name));
  if (stat.isFile()) console.log(`${name}: ${stat.size} bytes`);
}
